// Webhooks across a crash: the real local server (`npm start`'s wrangler dev and workerd) is killed
// with SIGKILL — its whole process group — in the middle of a burst of access requests and
// approvals, then started again on the same state. A real receiver on 127.0.0.1 stays up
// throughout. Every change acknowledged (201) before a kill must reach both hooks (the project's,
// and its group's, which gets the event copied up), signed; a change never gets two event ids;
// and nothing is delivered that did not happen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { freePort, startServer } from '../../worker/dev/server.mjs';
import { eventually, WebhookReceiver } from '../e2e/support/webhook-receiver';

const CYCLES = Number(process.env.CRASH_CYCLES) || 3;
const PER_CYCLE = 24;
const ADMIN_TOKEN = `crash-webhooks-admin-${process.pid}`;
const VARS = { ADMIN_TOKEN, TOKEN_HASH_KEY: 'crash-webhooks-hash-key', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1' };

interface Server {
  url: string;
  pid: number;
  child: { once: (event: string, cb: () => void) => void; exitCode: number | null; signalCode: string | null };
  stop: (signal?: string) => Promise<void>;
}

describe('webhooks across a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-crash-webhooks-'));
  let server: Server | null = null;
  let receiver: WebhookReceiver | null = null;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`delivers every acknowledged change across ${CYCLES} SIGKILLs, each with one event id`, async () => {
    const port = await freePort();
    const start = async () => (server = (await startServer({ port, persistTo: join(dir, 'state'), vars: VARS })) as Server);
    const url = (await start()).url;
    const api = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${url}/api/v4${path}`, {
        method,
        headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };

    receiver = new WebhookReceiver(await freePort());
    await receiver.start();
    const owner = await api('POST', '/users', ADMIN_TOKEN, { username: 'owner', name: 'Owner', password: 'owner-password' });
    const ownerToken = (await api('POST', `/users/${owner.body.id}/impersonation_tokens`, ADMIN_TOKEN, { name: 'owner', scopes: ['api'] })).body.token;
    const group = (await api('POST', '/groups', ownerToken, { name: 'Crash', path: 'crash', visibility: 'public' })).body;
    const project = (await api('POST', '/projects', ownerToken, { name: 'Site', path: 'site', namespace_id: group.id, visibility: 'public' })).body;
    const secrets = new Map<string, string>();
    for (const [name, path] of [['project', `/projects/${project.id}`], ['group', `/groups/${group.id}`]]) {
      const hook = await api('POST', `${path}/hooks`, ownerToken, { url: receiver.urlFor(name), token: 'crash-token' });
      expect(hook.status).toBe(201);
      secrets.set(`/${name}`, hook.body.signing_token);
    }
    // The requesters, made before the load so that the load is only requests and approvals.
    const users: { id: number; token: string }[] = [];
    for (let i = 0; i < CYCLES * PER_CYCLE; i++) {
      const created = await api('POST', '/users', ADMIN_TOKEN, { username: `w${i}`, name: `W ${i}`, password: `w${i}-password-1` });
      const token = await api('POST', `/users/${created.body.id}/impersonation_tokens`, ADMIN_TOKEN, { name: 't', scopes: ['api'] });
      users.push({ id: created.body.id, token: token.body.token });
    }

    const acked = { requested: new Set<number>(), approved: new Set<number>() };
    let inFlightAtKills = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let up = true;
      const batch = users.slice(cycle * PER_CYCLE, (cycle + 1) * PER_CYCLE);
      const load = Promise.all(
        batch.map(async (u, i) => {
          await new Promise((r) => setTimeout(r, i * 50));
          try {
            if (!up) return;
            const requested = await api('POST', `/projects/${project.id}/access_requests`, u.token);
            expect(requested.status).toBe(201);
            acked.requested.add(u.id);
            const approved = await api('PUT', `/projects/${project.id}/access_requests/${u.id}/approve`, ownerToken);
            expect(approved.status).toBe(201);
            acked.approved.add(u.id);
          } catch (e) {
            if (up) throw e;
            inFlightAtKills++;
          }
        }),
      );
      // Kill at a different point of each burst: once a few of its approvals were acknowledged.
      const approvedBefore = acked.approved.size;
      await eventually('approvals before the kill', () => (acked.approved.size >= approvedBefore + 4 + 3 * cycle ? true : undefined), 60_000);
      // The crash: SIGKILL to wrangler, workerd and everything else in the server's process group.
      up = false;
      const exited = new Promise<void>((r) => (server!.child.exitCode !== null || server!.child.signalCode !== null ? r() : server!.child.once('exit', r)));
      process.kill(-server!.pid, 'SIGKILL');
      await exited;
      await load;
      await start();
    }

    // Both hooks get every acknowledged change: the project's own, and the group's by the copy.
    const expected = [...secrets.keys()].flatMap((path) => [
      ...[...acked.requested].map((id) => `${path} user_access_request_to_project requested ${id}`),
      ...[...acked.approved].map((id) => `${path} user_add_to_team approved ${id}`),
    ]);
    await eventually(
      'every acknowledged change at both hooks',
      () => {
        const got = new Set(receiver!.received.map((d) => `${d.path} ${d.json.event_name} ${d.json.action} ${d.json.user_id}`));
        return expected.every((e) => got.has(e)) ? true : undefined;
      },
      90_000,
    );
    // Signed, and with GitLab's token: each hook's deliveries verify with that hook's secret.
    for (const [path, secret] of secrets) expect(receiver.verifiedDeliveries(secret, 'crash-token', path).length).toBeGreaterThan(0);

    // After de-duplication by Idempotency-Key, each change was delivered with one event id per hook.
    const idsOf = new Map<string, Set<string>>();
    for (const d of receiver.received) {
      const change = `${d.path} ${d.json.event_name} ${d.json.user_id}`;
      idsOf.set(change, (idsOf.get(change) ?? new Set()).add(d.headers['idempotency-key']));
    }
    for (const [change, ids] of idsOf) expect(ids.size, `${change} came with ${ids.size} event ids`).toBe(1);

    // Nothing invented: whoever was announced as approved is a member; whoever asked, asked.
    const members = new Set<number>(((await api('GET', `/projects/${project.id}/members?per_page=100`, ownerToken)).body as { id: number }[]).map((m) => m.id));
    for (const d of receiver.received) {
      const id = Number(d.json.user_id);
      if (d.json.action === 'approved') expect(members.has(id), `user ${id} announced as approved is a member`).toBe(true);
      expect(users.some((u) => u.id === id), `user ${id} is one of the requesters`).toBe(true);
    }
    const duplicates = receiver.received.length - new Set(receiver.received.map((d) => `${d.path} ${d.headers['idempotency-key']}`)).size;
    console.log(
      `crash-webhooks: ${CYCLES} SIGKILL cycles, ${acked.requested.size + acked.approved.size} acknowledged changes delivered to 2 hooks, ` +
        `${inFlightAtKills} in flight at the kills, ${duplicates} repeated deliveries (same id)`,
    );
    expect(acked.approved.size).toBeGreaterThan(CYCLES * 3);
  }, 120_000 + CYCLES * 40_000);
});
