// Crash and restart: the real local server (`npm start`'s wrangler dev and workerd) is killed with
// SIGKILL — its whole process group — in the middle of two loads at once, then started again on the
// same state. One server and one kill per cycle prove both:
//
// - the objects (support/crash-objects.ts): a stream of sign-ups, tokens, access requests,
//   approvals, denials and blocks. Every write acknowledged (201/204) before the kill must be there,
//   and nothing may be half-written: a block that committed ends the user's token and pending
//   request, if need be through the Directory's alarm after the restart; the indexes kept by the
//   outbox (memberships, the owners' inbox) catch up.
// - the webhooks (support/crash-webhooks.ts): a burst of access requests and approvals on a project
//   whose hook, and its group's, point at a real receiver on 127.0.0.1 that stays up throughout.
//   Every change acknowledged before a kill reaches both hooks, signed; a change never gets two
//   event ids; nothing is delivered that did not happen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient, freePort, startServer, type Server } from './support/crash-server';
import { objectWorkload } from './support/crash-objects';
import { webhookWorkload } from './support/crash-webhooks';
import { WebhookReceiver } from '../e2e/support/webhook-receiver';

const CYCLES = Number(process.env.CRASH_CYCLES) || 4;
const ADMIN_TOKEN = `crash-admin-${process.pid}`;
const VARS = { ADMIN_TOKEN, TOKEN_HASH_KEY: 'crash-restart-hash-key', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1' };

describe('crash and restart under load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-crash-'));
  let server: Server | null = null;
  let receiver: WebhookReceiver | null = null;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write and delivers every acknowledged change across ${CYCLES} SIGKILLs, nothing half-written, each change with one event id`, async () => {
    const port = await freePort();
    const start = async () => (server = await startServer({ port, persistTo: join(dir, 'state'), vars: VARS }));
    let url = (await start()).url;
    const api = apiClient(() => url);

    const rx = new WebhookReceiver(await freePort());
    receiver = rx;
    await rx.start();
    const [objects, hooks] = await Promise.all([objectWorkload(api, ADMIN_TOKEN), webhookWorkload(api, ADMIN_TOKEN, rx, CYCLES)]);

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let up = true;
      const alive = () => up;
      const load = objects.load(alive);
      // The kill comes at a different moment in each cycle: later in the stream of users, and once
      // a few of the burst's approvals were acknowledged (more each cycle).
      await new Promise((r) => setTimeout(r, 1500 + 400 * cycle));
      const burst = hooks.burst(cycle, alive);
      await burst.killable;
      // The crash: SIGKILL to wrangler, workerd and everything else in the server's process group.
      up = false;
      const running = server;
      if (!running) throw new Error('the server is not running');
      const exited = new Promise<void>((r) => (running.child.exitCode !== null || running.child.signalCode !== null ? r() : running.child.once('exit', r)));
      process.kill(-running.pid, 'SIGKILL');
      await exited;
      await Promise.all([load, burst.done]);
      url = (await start()).url;
      await objects.verify();
    }

    await objects.verifyCaughtUp();
    const delivered = await hooks.verify();

    const { acknowledged } = objects.counts;
    const inFlight = objects.counts.inFlightAtKills + hooks.counts.inFlightAtKills;
    console.log(
      `crash-restart: ${CYCLES} SIGKILL cycles, ${acknowledged} acknowledged writes kept, ${delivered.changes} acknowledged changes delivered to 2 hooks, ` +
        `${inFlight} writes in flight at the kills, ${delivered.repeats} repeated deliveries (same id)`,
    );
    expect(acknowledged).toBeGreaterThan(CYCLES * 10);
    expect(objects.someoneJoined()).toBe(true);
    expect(hooks.approvals()).toBeGreaterThan(CYCLES * 3);
  }, 120_000 + CYCLES * 45_000);
});
