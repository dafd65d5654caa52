// The soak, bounded, on every change (`npm run test:soak`, a step of CI's after `npm test`): the
// mixed workload of `npm run soak` (support/soak-workload.mjs) for about a minute against a server of
// its own, `npm start`'s wrangler dev with wrangler.toml's bindings on fresh state. Tens of users
// sign in through the pages and OAuth, refresh their tokens, ask for access, withdraw and poll,
// while owners poll their inbox and approve or deny. Load held: no answer outside the flow, no 5xx,
// no network error. Nothing lost: every acknowledged request, approval, denial and withdrawal is
// there afterwards, in the lists, the owners' inboxes, the users' own requests and their memberships.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnock, type RunningServer } from '../e2e/support/knock-server';
import { createSoak } from './support/soak-workload.mjs';

const USERS = Number(process.env.SOAK_USERS) || 30;
const SECONDS = Number(process.env.SOAK_SECONDS) || 45;

describe('the soak, bounded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-soak-bounded-'));
  let server: RunningServer | undefined;
  beforeAll(async () => {
    server = await startKnock(join(dir, 'state'));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`holds ${USERS} users' mixed workload for ${SECONDS} s, and loses nothing it acknowledged`, async () => {
    const { url, adminToken } = server!;
    const soak = createSoak({ base: url, adminToken, users: USERS, prefix: 'bounded', staggerMs: 5_000 });
    await soak.setUp();
    await soak.run(Date.now() + SECONDS * 1000);
    const lost = await soak.verify();

    const outcomes = Object.fromEntries(soak.stats.byOutcome);
    const done = soak.acknowledged();
    console.log(`soak: ${USERS} users, ${soak.stats.requests} requests, ${done.requests} requests and ${done.approvals} approvals acknowledged, ${lost.length} lost`);
    expect(soak.stats.errors).toEqual([]);
    expect(lost).toEqual([]);
    // Every part of the workload ran: all signed in, and each kind of write was acknowledged.
    expect(outcomes['token exchange 200']).toBe(USERS);
    for (const outcome of ['token refresh 200', 'request access 201', 'approve 201', 'deny 204', 'withdraw 204', 'inbox 200', 'own requests 200']) {
      expect(outcomes[outcome], outcome).toBeGreaterThan(0);
    }
  }, 180_000);
});
