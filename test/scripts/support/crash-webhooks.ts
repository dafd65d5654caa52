// The crash test's load on webhooks (test/scripts/crash-restart.test.ts): a project and its group
// each have a hook to a real receiver on 127.0.0.1 that stays up across the kills; each cycle a
// burst of users asks for access to the project and its owner approves each. `verify` checks at the
// end that every change acknowledged before a kill reached both hooks (the group's by the copy up),
// signed and with GitLab's token; that each change came with one event id per hook; and that
// nothing announced did not happen.
import { expect } from 'vitest';
import { inParallel, type apiClient } from './crash-server';
import { eventually, type WebhookReceiver } from '../../e2e/support/webhook-receiver';

type Api = ReturnType<typeof apiClient>;

/** Each cycle's burst: 18 users, 72 in 4 cycles. */
const PER_CYCLE = 18;

/** Makes the stage (an owner, a group, a project, a hook on each, the requesters); answers the bursts and the checks. */
export async function webhookWorkload(api: Api, adminToken: string, rx: WebhookReceiver, cycles: number) {
  const owner = await api('POST', '/users', adminToken, { username: 'hook-owner', name: 'Hook Owner', password: 'owner-password' });
  const ownerToken = (await api('POST', `/users/${owner.body.id}/impersonation_tokens`, adminToken, { name: 'owner', scopes: ['api'] })).body.token;
  const group = (await api('POST', '/groups', ownerToken, { name: 'Hooked', path: 'hooked', visibility: 'public' })).body;
  const project = (await api('POST', '/projects', ownerToken, { name: 'Site', path: 'site', namespace_id: group.id, visibility: 'public' })).body;
  const secrets = new Map<string, string>();
  for (const [name, path] of [['project', `/projects/${project.id}`], ['group', `/groups/${group.id}`]]) {
    const hook = await api('POST', `${path}/hooks`, ownerToken, { url: rx.urlFor(name!), token: 'crash-token' });
    expect(hook.status).toBe(201);
    secrets.set(`/${name}`, hook.body.signing_token);
  }
  // The requesters, made before the load so that the load is only requests and approvals.
  const users: { id: number; token: string }[] = [];
  await inParallel(Array.from({ length: cycles * PER_CYCLE }, (_, i) => i), 8, async (i) => {
    const created = await api('POST', '/users', adminToken, { username: `w${i}`, name: `W ${i}`, password: `w${i}-password-1` });
    expect(created.status).toBe(201);
    const token = await api('POST', `/users/${created.body.id}/impersonation_tokens`, adminToken, { name: 't', scopes: ['api'] });
    users[i] = { id: created.body.id, token: token.body.token };
  });

  const acked = { requested: new Set<number>(), approved: new Set<number>() };
  const counts = { inFlightAtKills: 0 };

  /** The cycle's burst, until `alive` says the server is being killed; `killable` resolves once a few of its approvals were acknowledged (more each cycle). */
  const burst = (cycle: number, alive: () => boolean) => {
    const approvedBefore = acked.approved.size;
    const done = Promise.all(
      users.slice(cycle * PER_CYCLE, (cycle + 1) * PER_CYCLE).map(async (u, i) => {
        await new Promise((r) => setTimeout(r, i * 50));
        try {
          if (!alive()) return;
          const requested = await api('POST', `/projects/${project.id}/access_requests`, u.token);
          expect(requested.status).toBe(201);
          acked.requested.add(u.id);
          const approved = await api('PUT', `/projects/${project.id}/access_requests/${u.id}/approve`, ownerToken);
          expect(approved.status).toBe(201);
          acked.approved.add(u.id);
        } catch (e) {
          if (alive()) throw e;
          counts.inFlightAtKills++;
        }
      }),
    );
    const killable = eventually('approvals before the kill', () => (acked.approved.size >= approvedBefore + 4 + 3 * cycle ? true : undefined), 60_000);
    return { done, killable };
  };

  const verify = async () => {
    // Both hooks get every acknowledged change: the project's own, and the group's by the copy.
    const expected = [...secrets.keys()].flatMap((path) => [
      ...[...acked.requested].map((id) => `${path} user_access_request_to_project requested ${id}`),
      ...[...acked.approved].map((id) => `${path} user_add_to_team approved ${id}`),
    ]);
    await eventually(
      'every acknowledged change at both hooks',
      () => {
        const got = new Set(rx.received.map((d) => `${d.path} ${d.json.event_name} ${d.json.action} ${d.json.user_id}`));
        return expected.every((e) => got.has(e)) ? true : undefined;
      },
      90_000,
    );
    // Signed, and with GitLab's token: each hook's deliveries verify with that hook's secret.
    for (const [path, secret] of secrets) expect(rx.verifiedDeliveries(secret, 'crash-token', path).length).toBeGreaterThan(0);

    // After de-duplication by Idempotency-Key, each change was delivered with one event id per hook.
    const idsOf = new Map<string, Set<string>>();
    for (const d of rx.received) {
      const change = `${d.path} ${d.json.event_name} ${d.json.user_id}`;
      idsOf.set(change, (idsOf.get(change) ?? new Set()).add(d.headers['idempotency-key']!));
    }
    for (const [change, ids] of idsOf) expect(ids.size, `${change} came with ${ids.size} event ids`).toBe(1);

    // Nothing invented: whoever was announced as approved is a member; whoever asked, asked.
    const members = new Set<number>(((await api('GET', `/projects/${project.id}/members?per_page=100`, ownerToken)).body as { id: number }[]).map((m) => m.id));
    for (const d of rx.received) {
      const id = Number(d.json.user_id);
      if (d.json.action === 'approved') expect(members.has(id), `user ${id} announced as approved is a member`).toBe(true);
      expect(users.some((u) => u.id === id), `user ${id} is one of the requesters`).toBe(true);
    }
    const repeats = rx.received.length - new Set(rx.received.map((d) => `${d.path} ${d.headers['idempotency-key']}`)).size;
    return { changes: acked.requested.size + acked.approved.size, repeats };
  };

  return { burst, verify, counts, approvals: () => acked.approved.size };
}
