// Webhooks end to end: the real local server (`npm start`'s wrangler dev) delivers to a real HTTP
// receiver on 127.0.0.1. Every delivery is verified as a receiver would (the `standardwebhooks`
// package and GitLab's secret token). The receiver then goes down for a while: Knock retries,
// rests the hook after four failures in a row, and delivers everything once the hook is edited.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { freePort, startServer } from '../../worker/dev/server.mjs';
import { SYSTEM_TEST_VARS } from '../scripts/support/server-vars';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

const ADMIN_TOKEN = 'webhooks-e2e-admin-token';

describe('webhooks against a real receiver', () => {
  const state = mkdtempSync(join(tmpdir(), 'knock-webhooks-'));
  let server: { url: string; stop: () => Promise<void> } | null = null;
  let receiver: WebhookReceiver | null = null;
  afterAll(async () => {
    await receiver?.stop();
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('delivers signed events, retries while the receiver is down, rests the hook, and catches up once it is edited', async () => {
    // Retries a second apart, so the schedule runs in seconds.
    const running: { url: string; stop: () => Promise<void> } = await startServer({
      persistTo: state,
      vars: { ...SYSTEM_TEST_VARS, ADMIN_TOKEN, TOKEN_HASH_KEY: 'webhooks-e2e-hash-key', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1' },
    });
    server = running;
    const url = running.url;
    const api = async <T>(token: string, method: string, path: string, expected: number, body?: unknown): Promise<T> => {
      const res = await fetch(`${url}/api/v4${path}`, {
        method,
        headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return (text ? JSON.parse(text) : null) as T;
    };
    const user = async (username: string) => {
      const created = await api<{ id: number }>(ADMIN_TOKEN, 'POST', '/users', 201, { username, name: username.toUpperCase(), password: `${username}-password-1` });
      const { token } = await api<{ token: string }>(ADMIN_TOKEN, 'POST', `/users/${created.id}/impersonation_tokens`, 201, { name: 'e2e', scopes: ['api'] });
      return { id: created.id, username, token };
    };
    const [alice, bob, carol] = [await user('alice'), await user('bob'), await user('carol')];
    await api(alice.token, 'POST', '/groups', 201, { name: 'Acme', path: 'acme', visibility: 'public' });
    const project = await api<{ id: number }>(alice.token, 'POST', '/projects', 201, { name: 'Website', path: 'website', namespace_id: 'acme', visibility: 'public' });
    const website = `/projects/${project.id}`;

    const rx = new WebhookReceiver(await freePort());
    receiver = rx;
    await rx.start();
    const hook = await api<{ id: number; signing_token: string }>(alice.token, 'POST', `${website}/hooks`, 201, { url: rx.url, token: 'e2e-token' });
    const hookState = () => api<{ alert_status: string }>(alice.token, 'GET', `${website}/hooks/${hook.id}`, 200);
    const names = () => rx.unique().map((d) => `${d.json.event_name} ${d.json.action} ${d.json.user_id}`);

    // bob asks to join acme/website and alice approves him.
    await api(bob.token, 'POST', `${website}/access_requests`, 201);
    await api(alice.token, 'PUT', `${website}/access_requests/${bob.id}/approve?access_level=30`, 201);
    await eventually('the request and the approval', () => (rx.unique().length >= 2 ? true : undefined));
    expect(names()).toEqual([`user_access_request_to_project requested ${bob.id}`, `user_add_to_team approved ${bob.id}`]);
    expect(rx.received[1]?.json).toMatchObject({ project_path_with_namespace: 'acme/website', access_level: 'Developer', actor: { username: 'alice' } });

    // The receiver goes down; carol asks and alice denies her.
    await rx.stop();
    await api(carol.token, 'POST', `${website}/access_requests`, 201);
    await api(alice.token, 'DELETE', `${website}/access_requests/${carol.id}`, 204);
    // Four failed attempts in a row rest the hook (GitLab's auto-disabling).
    await eventually('the hook to rest', async () => ((await hookState()).alert_status === 'temporarily_disabled' ? true : undefined));
    const failures = await api<{ response_status: string; internal_error_message: string }[]>(alice.token, 'GET', `${website}/hooks/${hook.id}/events?per_page=100`, 200);
    expect(failures.filter((e) => e.response_status === 'internal error').length).toBeGreaterThanOrEqual(4);

    // Back up; editing the hook enables it again, and what waited is delivered.
    await rx.start();
    expect(await api<{ alert_status: string }>(alice.token, 'PUT', `${website}/hooks/${hook.id}`, 200, { name: 'Website access' })).toMatchObject({
      alert_status: 'executable',
    });
    await eventually('the denial', () => (rx.unique().length >= 4 ? true : undefined));
    expect(names()).toEqual([
      `user_access_request_to_project requested ${bob.id}`,
      `user_add_to_team approved ${bob.id}`,
      `user_access_request_to_project requested ${carol.id}`,
      `user_access_request_revoked_for_project denied ${carol.id}`,
    ]);

    // Every delivery verifies, and carries GitLab's token.
    expect(rx.verifiedDeliveries(hook.signing_token, 'e2e-token').length).toBeGreaterThanOrEqual(4);
    // The audit log shows each change with its author.
    const audit = await api<{ author_id: number; details: { action: string; target_id: number; event_id: string } }[]>(alice.token, 'GET', `${website}/audit_events`, 200);
    const changes = audit.filter((e) => ['requested', 'approved', 'denied'].includes(e.details.action));
    expect(changes.map((e) => [e.details.action, e.author_id, e.details.target_id])).toEqual([
      ['denied', alice.id, carol.id],
      ['requested', carol.id, carol.id],
      ['approved', alice.id, bob.id],
      ['requested', bob.id, bob.id],
    ]);
    expect(changes.map((e) => e.details.event_id).reverse()).toEqual(rx.unique().map((d) => d.headers['webhook-id']));
  });
});
