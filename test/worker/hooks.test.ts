import { runInDurableObject } from 'cloudflare:test';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../worker/clock';
import { outbound } from '../../worker/events/delivery';
import { advance } from './support/clock';
import { expectError } from './support/contract';
import { admin, as, createGroup, createProject, createSource, KIND_ROUTES, person, startWorker, type Person } from './support/namespaces';
import { Receiver, settle, type Delivery } from './support/receiver';
import { dumpTables, namespaceStub } from './support/storage';

beforeAll(startWorker, 30_000);

interface Hook {
  id: number;
  url: string;
  signing_token: string;
  alert_status: string;
  disabled_until: string | null;
}

interface HookEvent {
  id: number;
  url: string;
  trigger: string;
  request_headers: Record<string, string>;
  request_data: Record<string, unknown>;
  response_status: string;
  response_body: string;
  execution_duration: number;
  event_id: string;
  attempt: number;
  internal_error_message: string | null;
}

const dateIn = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const addHook = async (who: Person, base: string, body: Record<string, unknown>): Promise<Hook> => {
  const res = await as(who).post(`${base}/hooks`, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Hook;
};

const hookEvents = async (who: Person, base: string, hookId: number, query = ''): Promise<HookEvent[]> => {
  const res = await as(who).get(`${base}/hooks/${hookId}/events?per_page=100${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as HookEvent[];
};

const hookOf = async (who: Person, base: string, hookId: number): Promise<Hook> => (await (await as(who).get(`${base}/hooks/${hookId}`)).json()) as Hook;

/** Verifies a delivery exactly as a receiver would, with the `standardwebhooks` package. */
const verified = (d: Delivery, secret: string) => new Webhook(secret).verify(d.body, d.headers) as Record<string, unknown>;

describe.each(KIND_ROUTES)('webhooks of %s', (kind) => {
  const owned = kind === 'groups' ? 'group_id' : 'project_id';
  const names =
    kind === 'groups'
      ? { request: 'user_access_request_to_group', revoke: 'user_access_request_revoked_for_group', add: 'user_add_to_group', update: 'user_update_for_group', remove: 'user_remove_from_group' }
      : { request: 'user_access_request_to_project', revoke: 'user_access_request_revoked_for_project', add: 'user_add_to_team', update: 'user_update_for_team', remove: 'user_remove_from_team' };

  it('adds, shows, edits and deletes hooks in GitLab shape; the secrets are shown once and stored sealed', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/knock', token: 'my-secret-token', name: 'Audit' });
    expect(hook).toEqual({
      id: expect.any(Number),
      url: 'https://hooks.example.com/knock',
      name: 'Audit',
      description: '',
      created_at: expect.any(String),
      member_events: true,
      access_request_events: true,
      enable_ssl_verification: true,
      alert_status: 'executable',
      disabled_until: null,
      [owned]: source.id,
      signing_token: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { signing_token, ...shown } = hook;
    expect(await (await as(owner).get(`${base}/hooks`)).json()).toEqual([shown]);
    expect(await hookOf(owner, base, hook.id)).toEqual(shown);

    const edited = await as(owner).put(`${base}/hooks/${hook.id}`, { access_request_events: false, description: 'Members only' });
    expect(edited.status).toBe(200);
    expect(await edited.json()).toEqual({ ...shown, access_request_events: false, description: 'Members only' });

    // Neither secret is anywhere in storage in clear, nor in any answer after the first.
    const stored = JSON.stringify(await dumpTables(namespaceStub(source.id)));
    expect(stored).not.toContain('my-secret-token');
    expect(stored).not.toContain(signing_token.slice('whsec_'.length));

    expect((await as(owner).delete(`${base}/hooks/${hook.id}`)).status).toBe(204);
    await expectError(await as(owner).get(`${base}/hooks/${hook.id}`), 404, { message: '404 Hook Not Found' });
    await expectError(await as(owner).delete(`${base}/hooks/${hook.id}`), 404, { message: '404 Hook Not Found' });
  });

  it('refuses a URL that is not http(s) or leads to this machine or its networks (400, Url is blocked)', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const blocked: [string, string][] = [
      ['ftp://hooks.example.com/x', 'Only allowed schemes are http, https'],
      ['http://localhost:8080/x', 'Requests to localhost are not allowed'],
      ['http://127.0.0.1/x', 'Requests to loopback addresses are not allowed'],
      ['http://0x7f.1/x', 'Requests to loopback addresses are not allowed'],
      ['http://[::1]/x', 'Requests to loopback addresses are not allowed'],
      ['http://10.1.2.3/x', 'Requests to the local network are not allowed'],
      ['http://192.168.0.10/x', 'Requests to the local network are not allowed'],
      ['http://[fd00::1]/x', 'Requests to the local network are not allowed'],
      ['http://169.254.169.254/latest/meta-data', 'Requests to the link local network are not allowed'],
      ['http://[::ffff:169.254.169.254]/', 'Requests to the link local network are not allowed'],
      ['http://0.0.0.0/', 'Requests to localhost are not allowed'],
      // IPv4 written inside IPv6, special-purpose ranges, names that are not public.
      ['http://[::127.0.0.1]/', 'Requests to loopback addresses are not allowed'],
      ['http://[::ffff:0:7f00:1]/', 'Requests to loopback addresses are not allowed'],
      ['http://[64:ff9b::a9fe:a9fe]/', 'Requests to the link local network are not allowed'],
      ['http://[2002:7f00:1::]/', 'Requests to loopback addresses are not allowed'],
      ['http://[2001::7f00:1]/', 'Requests to special-purpose addresses are not allowed'],
      ['http://198.18.0.1/', 'Requests to special-purpose addresses are not allowed'],
      ['http://192.0.0.1/', 'Requests to special-purpose addresses are not allowed'],
      ['http://192.0.2.1/', 'Requests to special-purpose addresses are not allowed'],
      ['http://localhost.localdomain/', 'Requests to localhost are not allowed'],
      ['http://metadata.google.internal/', 'Requests to the local network are not allowed'],
    ];
    for (const [url, why] of blocked) await expectError(await as(owner).post(`${base}/hooks`, { url }), 400, { message: `Url is blocked: ${why}` });
    await expectError(await as(owner).post(`${base}/hooks`, { url: 'not a url' }), 400, { error: 'url is invalid' });
    const hook = await addHook(owner, base, { url: 'http://93.184.215.14/hook' });
    await expectError(await as(owner).put(`${base}/hooks/${hook.id}`, { url: 'http://172.16.0.1/' }), 400, { message: 'Url is blocked: Requests to the local network are not allowed' });
    expect((await (await as(owner).get(`${base}/hooks`)).json()) as Hook[]).toHaveLength(1);
  });

  it('refuses a secret token that cannot be sent as a header: CR, LF, NUL, other controls, edge spaces (400)', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    for (const token of ['a\r\nX-Injected: 1', 'line\nbreak', 'nul\u0000byte', 'bell\u0007', 'del\u007f', ' padded', 'padded\t', 'euro€']) {
      await expectError(await as(owner).post(`${base}/hooks`, { url: 'https://hooks.example.com/t', token }), 400, { error: 'token is invalid' });
    }
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/t', token: 'a secret with spaces\tand ~!@#$%^&*()' });
    await expectError(await as(owner).put(`${base}/hooks/${hook.id}`, { token: 'x\ny' }), 400, { error: 'token is invalid' });
    const receiver = new Receiver();
    expect((await as(owner).post(`${base}/hooks/${hook.id}/test`)).status).toBe(201);
    expect(receiver.received[0].headers['x-gitlab-token']).toBe('a secret with spaces\tand ~!@#$%^&*()');
  });

  it(`is for ${kind === 'groups' ? 'Owners' : 'Maintainers and Owners'} and administrators`, async () => {
    const [owner, manager, below, stranger] = await Promise.all([person('own'), person('mgr'), person('blw'), person('str')]);
    const source = await createSource(kind, owner, { visibility: 'private' });
    const base = `/${kind}/${source.id}`;
    const [enough, tooLow] = kind === 'groups' ? [50, 40] : [40, 30];
    expect((await admin.post(`${base}/members`, { user_id: manager.id, access_level: enough })).status).toBe(201);
    expect((await admin.post(`${base}/members`, { user_id: below.id, access_level: tooLow })).status).toBe(201);
    const hook = await addHook(manager, base, { url: 'https://hooks.example.com/a' });
    expect((await admin.get(`${base}/hooks/${hook.id}`)).status).toBe(200);
    await expectError(await as(below).get(`${base}/hooks`), 403, { message: '403 Forbidden' });
    await expectError(await as(below).post(`${base}/hooks`, { url: 'https://hooks.example.com/b' }), 403, { message: '403 Forbidden' });
    await expectError(await as(below).post(`${base}/hooks/${hook.id}/test`), 403, { message: '403 Forbidden' });
    await expectError(await as(stranger).get(`${base}/hooks/${hook.id}/events`), 404, { message: `404 ${kind === 'groups' ? 'Group' : 'Project'} Not Found` });
  });

  it('delivers signed GitLab member events from the alarm, after the call has answered', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/knock', token: 'gitlab-token' });
    const receiver = new Receiver();
    // The receiver does not answer until the API calls have: had a delivery been on their path,
    // they would wait for it.
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    receiver.respond = async () => {
      await answered;
      return new Response('ok');
    };
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`${base}/access_requests/${bob.id}/approve`, { access_level: 20, expires_at: dateIn(30) })).status).toBe(201);
    release();
    await settle(source.id);

    expect(receiver.events()).toEqual([`${names.request} requested`, `${names.add} approved`]);
    const [asked, approved] = receiver.received;
    for (const d of receiver.received) {
      expect(d.url).toBe('https://hooks.example.com/knock');
      expect(d.redirect).toBe('manual');
      expect(d.headers).toMatchObject({
        'content-type': 'application/json',
        'x-gitlab-event': 'Member Hook',
        'x-gitlab-token': 'gitlab-token',
        'x-gitlab-instance': 'http://knock.test',
        'x-gitlab-webhook-uuid': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
      });
      expect(d.headers['idempotency-key']).toBe(d.headers['webhook-id']);
      expect(d.headers['x-gitlab-event-uuid']).toBe(d.headers['webhook-id']);
      expect(verified(d, hook.signing_token)).toEqual(d.json);
    }
    expect(() => new Webhook(`whsec_${btoa('another secret of thirty-two bytes')}`).verify(approved.body, approved.headers)).toThrow();
    const where =
      kind === 'groups'
        ? { group_name: source.path, group_path: source.path, group_full_path: source.full_path, group_id: source.id, group_plan: null }
        : { project_name: source.path, project_path: source.path, project_path_with_namespace: source.full_path, project_id: source.id, project_visibility: 'public' };
    const level = (name: string) => (kind === 'groups' ? { group_access: name } : { access_level: name });
    expect(approved.json).toEqual({
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      ...where,
      user_username: bob.username,
      user_name: bob.name,
      user_email: '[REDACTED]',
      user_id: bob.id,
      ...level('Reporter'),
      expires_at: `${dateIn(30)}T00:00:00Z`,
      event_name: names.add,
      action: 'approved',
      actor: { id: owner.id, username: owner.username, name: owner.name },
      reason: null,
    });
    expect(asked.json).toMatchObject({ event_name: names.request, user_id: bob.id, ...level('Developer'), action: 'requested', actor: { id: bob.id } });
    // The same ids as the audit log's events.
    const audit = (await (await as(owner).get(`${base}/audit_events`)).json()) as { details: { event_id: string } }[];
    expect(audit.slice(0, 2).map((e) => e.details.event_id)).toEqual([approved.headers['webhook-id'], asked.headers['webhook-id']]);
  });

  it('delivers a denial, a withdrawal, and member changes, each told apart by action', async () => {
    const [owner, bob, carol, dave] = await Promise.all([person('own'), person('bob'), person('car'), person('dav')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    await addHook(owner, base, { url: 'https://hooks.example.com/all' });
    const receiver = new Receiver();
    for (const u of [bob, carol]) expect((await as(u).post(`${base}/access_requests`)).status).toBe(201);
    expect((await as(owner).delete(`${base}/access_requests/${bob.id}`)).status).toBe(204);
    expect((await as(carol).delete(`${base}/access_requests/${carol.id}`)).status).toBe(204);
    expect((await as(owner).post(`${base}/members`, { user_id: dave.id, access_level: 30 })).status).toBe(201);
    expect((await as(owner).put(`${base}/members/${dave.id}`, { access_level: 40 })).status).toBe(200);
    expect((await as(owner).delete(`${base}/members/${dave.id}`)).status).toBe(204);
    await settle(source.id);
    expect(receiver.events()).toEqual([
      `${names.request} requested`,
      `${names.request} requested`,
      `${names.revoke} denied`,
      `${names.revoke} withdrawn`,
      `${names.add} added`,
      `${names.update} updated`,
      `${names.remove} removed`,
    ]);
    expect(receiver.received[2].json.actor).toMatchObject({ id: owner.id });
    expect(receiver.received[3].json.actor).toMatchObject({ id: carol.id });
    // Names the object did not have are looked up before sending.
    expect(receiver.received[5].json).toMatchObject({ user_id: dave.id, user_username: dave.username, user_name: dave.name });
  });

  it('retries a failed delivery on the Standard Webhooks schedule with the same id, and logs every attempt', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/flaky', token: 'tkn' });
    const receiver = new Receiver();
    receiver.respond = () => (receiver.received.length < 3 ? new Response('try later', { status: 500 }) : new Response('ok'));
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    await settle(source.id);
    expect(receiver.received).toHaveLength(1);
    // Not again before the schedule says (5 s, then 5 min).
    advance(4);
    await settle(source.id);
    expect(receiver.received).toHaveLength(1);
    advance(6);
    await settle(source.id);
    expect(receiver.received).toHaveLength(2);
    advance(6 + 301);
    await settle(source.id);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((d) => d.body)).size).toBe(1);

    const log = await hookEvents(owner, base, hook.id);
    expect(log.map((e) => [e.attempt, e.response_status, e.response_body, e.internal_error_message])).toEqual([
      [3, '200', 'ok', null],
      [2, '500', 'try later', 'HTTP 500'],
      [1, '500', 'try later', 'HTTP 500'],
    ]);
    expect(log[0]).toMatchObject({
      url: 'https://hooks.example.com/flaky',
      trigger: 'access_request_hooks',
      event_id: receiver.received[0].headers['webhook-id'],
      request_data: receiver.received[0].json,
      execution_duration: expect.any(Number),
    });
    expect(log[0].request_headers['X-Gitlab-Token']).toBe('[REDACTED]');
    expect(JSON.stringify(log)).not.toContain('tkn');
    expect((await hookEvents(owner, base, hook.id, '&status=server_failure')).map((e) => e.attempt)).toEqual([2, 1]);
    expect((await hookEvents(owner, base, hook.id, '&status=200')).map((e) => e.attempt)).toEqual([3]);
    expect((await hookEvents(owner, base, hook.id, '&status=successful')).map((e) => e.attempt)).toEqual([3]);
    await expectError(await as(owner).get(`${base}/hooks/${hook.id}/events?status=teapot`), 400);
    // The log keeps seven days.
    advance(8 * 86_400);
    expect(await hookEvents(owner, base, hook.id)).toEqual([]);
  });

  it('stops retrying after the last step of the schedule', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/down' });
    const receiver = new Receiver();
    receiver.respond = () => new Response('down', { status: 503 });
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    for (let step = 0; step < 10; step++) {
      await settle(source.id);
      // Past the longest wait of the schedule (10 h) and of the hook's rest after failures.
      advance(11 * 3600);
    }
    // The first attempt and seven retries.
    expect(receiver.received).toHaveLength(8);
    const [last] = await hookEvents(owner, base, hook.id);
    expect(last.internal_error_message).toBe('HTTP 503; no more retries after 8 attempts');
  });

  it('rests a hook after 4 failures in a row, doubling the rest, disables it after 40; editing enables it again', async () => {
    const [owner, bob, carol] = await Promise.all([person('own'), person('bob'), person('car')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/failing' });
    const receiver = new Receiver();
    let up = false;
    receiver.respond = () => (up ? new Response('ok') : new Response('no', { status: 500 }));
    const test = () => as(owner).post(`${base}/hooks/${hook.id}/test`);
    for (let failures = 0; failures < 3; failures++) await expectError(await test(), 422, { message: 'Hook execution failed: HTTP 500' });
    expect((await hookOf(owner, base, hook.id)).alert_status).toBe('executable');
    await expectError(await test(), 422);
    const rested = await hookOf(owner, base, hook.id);
    expect(rested.alert_status).toBe('temporarily_disabled');
    expect(Date.parse(rested.disabled_until ?? '') - Date.now()).toBeGreaterThan(55_000);
    expect(Date.parse(rested.disabled_until ?? '') - Date.now()).toBeLessThanOrEqual(60_000);

    // While it rests, queued deliveries wait; then one goes, fails, and the rest doubles.
    const sent = receiver.received.length;
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    await settle(source.id);
    expect(receiver.received).toHaveLength(sent);
    advance(61);
    await settle(source.id);
    expect(receiver.received).toHaveLength(sent + 1);
    const doubled = await hookOf(owner, base, hook.id);
    expect(Date.parse(doubled.disabled_until ?? '') - (Date.now() + 61_000)).toBeGreaterThan(115_000);

    // Editing enables it at once.
    expect(await (await as(owner).put(`${base}/hooks/${hook.id}`, { name: 'edited' })).json()).toMatchObject({ alert_status: 'executable', disabled_until: null });

    // The 40th failure in a row disables it until someone edits it (the count before it is set
    // here; test/unit/auto-disable.test.ts goes through all forty).
    await runInDurableObject(namespaceStub(source.id), (_instance, state) => {
      state.storage.sql.exec('UPDATE hooks SET recent_failures = 39, disabled_until = NULL WHERE id = ?', hook.id);
    });
    await expectError(await test(), 422);
    expect(await hookOf(owner, base, hook.id)).toMatchObject({ alert_status: 'disabled' });
    // A disabled hook gets no new deliveries; what was queued before waits for it.
    expect((await as(carol).post(`${base}/access_requests`)).status).toBe(201);
    up = true;
    const before = receiver.received.length;
    advance(3 * 86_400);
    await settle(source.id);
    expect(receiver.received).toHaveLength(before);
    expect(await (await as(owner).put(`${base}/hooks/${hook.id}`, { name: 'fixed' })).json()).toMatchObject({ alert_status: 'executable' });
    await settle(source.id);
    expect(receiver.received.slice(before).map((d) => d.json.user_id)).toEqual([bob.id]);
  });

  it('resends a logged delivery with the same webhook-id and Idempotency-Key, newly signed', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/r' });
    const receiver = new Receiver();
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    await settle(source.id);
    const [logged] = await hookEvents(owner, base, hook.id);
    const resent = await as(owner).post(`${base}/hooks/${hook.id}/events/${logged.id}/resend`);
    expect(resent.status).toBe(201);
    expect(await resent.json()).toEqual({ response_status: 200 });
    const [first, again] = receiver.received;
    expect(again.body).toBe(first.body);
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(again.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
    expect(verified(again, hook.signing_token)).toEqual(first.json);
    expect((await hookEvents(owner, base, hook.id)).length).toBe(2);
    await expectError(await as(owner).post(`${base}/hooks/${hook.id}/events/987654/resend`), 404, { message: '404 Not found' });
  });

  it('test sends a sample event now, and answers 422 when the receiver fails', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/t' });
    const receiver = new Receiver();
    const ok = await as(owner).post(`${base}/hooks/${hook.id}/test`);
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ message: '201 Created' });
    expect((await as(owner).post(`${base}/hooks/${hook.id}/test/access_request_events`)).status).toBe(201);
    expect(receiver.received.map((d) => [d.json.event_name, d.json.user_id, d.json.test])).toEqual([
      [names.add, owner.id, true],
      [names.request, owner.id, true],
    ]);
    expect(verified(receiver.received[0], hook.signing_token)).toMatchObject({ test: true });
    await expectError(await as(owner).post(`${base}/hooks/${hook.id}/test/push_events`), 400, { error: 'trigger does not have a valid value' });
    receiver.respond = () => new Response('nope', { status: 404 });
    await expectError(await as(owner).post(`${base}/hooks/${hook.id}/test`), 422, { message: 'Hook execution failed: HTTP 404' });
  });
});

describe('sending safely', () => {
  const setUp = async () => {
    const owner = await person('own');
    const project = await createSource('projects', owner);
    const base = `/projects/${project.id}`;
    const hook = await addHook(owner, base, { url: 'https://hooks.example.com/s' });
    return { owner, project, base, hook, test: () => as(owner).post(`${base}/hooks/${hook.id}/test`) };
  };

  it('does not follow a redirect, and reads only the start of a large answer', async () => {
    const { owner, base, hook, test } = await setUp();
    const receiver = new Receiver();
    receiver.respond = () => new Response(null, { status: 302, headers: { Location: 'http://169.254.169.254/' } });
    await expectError(await test(), 422, { message: 'Hook execution failed: Redirects are not followed' });
    expect(receiver.received).toHaveLength(1);
    receiver.respond = () => new Response('x'.repeat(1024 * 1024));
    expect((await test()).status).toBe(201);
    const [big] = await hookEvents(owner, base, hook.id);
    expect(big.response_body).toHaveLength(2048);
  });

  it('reads at most 2 KB of an answer whatever its encoding: 2 kB of gzip that inflates to 2 MB', async () => {
    const { owner, base, hook, test } = await setUp();
    const inflated = 'y'.repeat(2 * 1024 * 1024);
    const gzip = new Uint8Array(await new Response(new Blob([inflated]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
    expect(gzip.byteLength).toBeLessThanOrEqual(2048 * 2);
    // What the runtime's fetch hands back for `Content-Encoding: gzip`: the length the receiver
    // declared is that of the compressed body, the body is the inflated one.
    const receiver = new Receiver();
    receiver.respond = () =>
      new Response(new Blob([gzip]).stream().pipeThrough(new DecompressionStream('gzip')), {
        headers: { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip', 'Content-Length': String(Math.min(gzip.byteLength, 2000)) },
      });
    for (let i = 0; i < 3; i++) expect((await test()).status).toBe(201);
    const events = await hookEvents(owner, base, hook.id);
    expect(events.map((e) => e.response_body)).toEqual(Array(3).fill('y'.repeat(2048)));
  });

  it('gives up on a receiver that does not answer within 10 seconds', async () => {
    const { test } = await setUp();
    const receiver = new Receiver();
    // The attempt's timeout, fired once the receiver holds the request instead of 10 s later.
    const asked: number[] = [];
    const timer = new AbortController();
    const realTimeout = outbound.timeout;
    outbound.timeout = (ms) => {
      asked.push(ms);
      return timer.signal;
    };
    receiver.respond = (d) =>
      new Promise<Response>((_resolve, reject) => {
        d.signal.addEventListener('abort', () => reject(d.signal.reason));
        timer.abort(new DOMException('The operation timed out.', 'TimeoutError'));
      });
    try {
      await expectError(await test(), 422, { message: 'Hook execution failed: No response within 10 seconds' });
    } finally {
      outbound.timeout = realTimeout;
    }
    expect(asked).toEqual([10_000]);
  });

  it('checks the address again when sending: a hook saved to a local address is not sent there', async () => {
    const { project, base, hook, test, owner } = await setUp();
    await runInDurableObject(namespaceStub(project.id), (_instance, state) => {
      state.storage.sql.exec("UPDATE hooks SET url = 'http://127.0.0.1:9/admin' WHERE id = ?", hook.id);
    });
    const receiver = new Receiver();
    await expectError(await test(), 422, { message: 'Hook execution failed: Url is blocked: Requests to loopback addresses are not allowed' });
    expect(receiver.received).toHaveLength(0);
    expect((await hookEvents(owner, base, hook.id))[0]).toMatchObject({ response_status: 'internal error', url: 'http://127.0.0.1:9/admin' });
  });
});

describe('hooks of groups above', () => {
  it("a group's hooks get its subgroups' and projects' events, each hook what it subscribed to", async () => {
    const [owner, bob, carol, dave] = await Promise.all([person('own'), person('bob'), person('car'), person('dav')]);
    const top = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: top.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    await addHook(owner, `/groups/${top.id}`, { url: 'https://hooks.example.com/members', access_request_events: false });
    await addHook(owner, `/groups/${top.id}`, { url: 'https://hooks.example.com/requests', member_events: false });
    await addHook(owner, `/projects/${project.id}`, { url: 'https://hooks.example.com/project' });
    const receiver = new Receiver();
    expect((await as(bob).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`/projects/${project.id}/access_requests/${bob.id}/approve`)).status).toBe(201);
    expect((await as(carol).post(`/groups/${sub.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).delete(`/groups/${sub.id}/access_requests/${carol.id}`)).status).toBe(204);
    expect((await as(owner).post(`/groups/${sub.id}/members`, { user_id: dave.id, access_level: 30 })).status).toBe(201);
    await settle(project.id, sub.id, top.id);

    const at = (path: string) => receiver.received.filter((d) => d.url.endsWith(path)).map((d) => `${d.json.event_name} ${d.json.action} ${d.json.user_id}`);
    expect(at('/project')).toEqual([`user_access_request_to_project requested ${bob.id}`, `user_add_to_team approved ${bob.id}`]);
    expect(at('/members')).toEqual([`user_add_to_team approved ${bob.id}`, `user_add_to_group added ${dave.id}`]);
    // Each flag governs exactly the events docs/webhooks.md lists under it: an approval adds a
    // member, and GitLab's member events fire when a user is added ("Group member events",
    // https://docs.gitlab.com/user/project/integrations/webhook_events/), so a hook with
    // member_events off does not get it.
    expect(at('/requests')).toEqual([
      `user_access_request_to_project requested ${bob.id}`,
      `user_access_request_to_group requested ${carol.id}`,
      `user_access_request_revoked_for_group denied ${carol.id}`,
    ]);
    const subEvent = receiver.received.find((d) => d.url.endsWith('/requests') && d.json.user_id === carol.id);
    expect(subEvent?.json).toMatchObject({ group_id: sub.id, group_full_path: sub.full_path });
  });
});
