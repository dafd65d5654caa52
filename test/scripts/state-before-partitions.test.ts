// A deployment's state made by the version before the Directory was taken apart (issue 16) keeps
// working after the update: the current code starts on a copy of a state directory written by that
// version (test/fixtures/state-before-partitions: how and from which commit in its README.md), and
// everything in it is used as its people would use it.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, type Server } from './support/crash-server';
import { WebBrowser, api, csrfOf, tokenEndpoint } from './support/web-client.mjs';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'state-before-partitions');
const fixture = JSON.parse(readFileSync(join(FIXTURE, 'secrets.json'), 'utf8'));
const people: Record<string, { id: number; username: string; password: string; token: string }> = fixture.people;
const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

describe('a state directory written before the partitions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-old-state-'));
  let server: Server;
  const url = () => server.url;
  const admin = () => api(url, fixture.vars.ADMIN_TOKEN);
  const as = (name: string) => api(url, people[name].token);
  const bearer = (token: string) => fetch(`${url()}/api/v4/user`, { headers: { Authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    cpSync(join(FIXTURE, 'v3'), join(dir, 'v3'), { recursive: true });
    server = await startServer({ port: await freePort(), persistTo: dir, vars: fixture.vars });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets every active user sign in, by the current username, and tells the blocked one why', async () => {
    for (const person of Object.values(people).filter((p) => p.username !== 'erin')) {
      const res = await new WebBrowser(url).signIn(person.username, person.password);
      expect(res.status, person.username).toBe(303);
    }
    const blocked = await new WebBrowser(url).signIn('erin', people.erin.password);
    expect(blocked.status).toBe(403);
    expect(await blocked.text()).toContain('Your account has been blocked');
    // dave was renamed david: the old name no longer signs in.
    expect((await new WebBrowser(url).signIn('dave', people.dave.password)).status).toBe(401);
  });

  it("keeps carol's browser session until it expires, and bob's signed-out one ended", async () => {
    const carol = await new WebBrowser(url, { knock_session: fixture.sessions.carol }).get('/');
    if (Date.now() < Date.parse(fixture.made_at) + SESSION_TTL_MS) {
      expect(carol.status).toBe(200);
      expect(await carol.text()).toContain('carol');
    } else {
      // Sessions last 7 days: past that, the fixture's session has expired as any would.
      expect(carol.status).toBe(302);
    }
    const bob = await new WebBrowser(url, { knock_session: fixture.sessions.bob_signed_out }).get('/');
    expect(bob.status).toBe(302);
    expect(bob.headers.get('Location')).toContain('/users/sign_in');
  });

  it('accepts the OAuth access token, rotates the refresh token, and refuses the rotated-out token', async () => {
    const me = await bearer(fixture.oauth.access_token);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: people.carol.id, username: 'carol' });
    expect((await bearer(fixture.oauth.rotated_out_access_token)).status).toBe(401);

    const { application: app } = fixture;
    const pair = await tokenEndpoint(url(), {
      grant_type: 'refresh_token',
      client_id: app.client_id,
      client_secret: app.client_secret,
      refresh_token: fixture.oauth.refresh_token,
    });
    expect((await bearer(pair.access_token)).status).toBe(200);
    // A new authorization of the same application: consent is remembered, the code exchanges.
    const browser = new WebBrowser(url);
    expect((await browser.signIn('carol', people.carol.password)).status).toBe(303);
    const code = await browser.authorizeCode(app.client_id, app.redirect_uri, 'after-update');
    const fresh = await tokenEndpoint(url(), { grant_type: 'authorization_code', client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: app.redirect_uri });
    expect((await bearer(fresh.access_token)).status).toBe(200);
  });

  it("accepts the renamed user's personal access token and every impersonation token; the blocked user's answers 401", async () => {
    const pat = fixture.personal_access_token;
    const res = await fetch(`${url()}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': pat.token } });
    if (new Date().toISOString().slice(0, 10) < pat.expires_at) {
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: people.dave.id, username: 'david' });
    } else {
      expect(res.status).toBe(401);
    }
    for (const name of ['alice', 'bob', 'frank', 'ivan']) expect(await as(name)('GET', '/user'), name).toMatchObject({ id: people[name].id });
    await as('erin')('GET', '/user', undefined, 401);
  });

  it('keeps names and paths taken', async () => {
    const taken = await fetch(`${url()}/api/v4/users`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': fixture.vars.ADMIN_TOKEN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'Alice', name: 'Another Alice', password: 'another-alice-password', email: 'another@example.com' }),
    });
    expect(taken.status).toBeGreaterThanOrEqual(400);
    expect(taken.status).toBeLessThan(500);
    await as('bob')('POST', '/groups', { name: 'Acme', path: 'ACME' }, 400);
    await as('bob')('POST', '/groups', { name: 'Tools', path: 'tools' }, 400);
    expect(await admin()('GET', '/users?username=david')).toEqual([expect.objectContaining({ id: people.dave.id })]);
  });

  it('shows what was pending in each list and in the owners\' inboxes, and the members with their expiry', async () => {
    const names = (rows: { username: string }[]) => rows.map((r) => r.username).sort();
    const { groups, projects, pending } = fixture;
    expect(names(await as('alice')('GET', `/groups/${groups.acme}/access_requests`))).toEqual(pending.acme);
    expect(names(await as('alice')('GET', `/projects/${projects.website}/access_requests`))).toEqual(pending.website);
    expect(names(await as('alice')('GET', `/groups/${groups.platform}/access_requests`))).toEqual(pending.platform);
    expect(names(await as('dave')('GET', `/groups/${groups.tools}/access_requests`))).toEqual(pending.tools);
    const inbox = await as('alice')('GET', '/access_requests');
    expect(inbox).toHaveLength(fixture.inbox.alice);
    expect(inbox.map((r: { username: string }) => r.username).sort()).toEqual([...pending.acme, ...pending.website, ...pending.platform].sort());
    expect(names(await as('dave')('GET', '/access_requests'))).toEqual(['ivan']);
    // The requesters' own views: ivan's two pending requests, grace's approval with its expiry.
    type Own = { source_full_path: string; status: string; access_level: number | null; expires_at: string | null };
    const own = async (name: string) =>
      ((await as(name)('GET', '/user/access_requests')) as Own[]).map((r) => ({ path: r.source_full_path, status: r.status, level: r.access_level, until: r.expires_at }));
    expect(await own('ivan')).toEqual(
      expect.arrayContaining([
        { path: 'acme/platform', status: 'pending', level: null, until: null },
        { path: 'tools', status: 'pending', level: null, until: null },
      ]),
    );
    expect(await own('grace')).toEqual([{ path: 'acme/platform/api', status: 'approved', level: 20, until: '2098-06-30' }]);

    expect(await as('alice')('GET', `/groups/${groups.platform}/members/${people.frank.id}`)).toMatchObject({ access_level: 30, expires_at: '2099-12-31' });
    expect(await as('alice')('GET', `/projects/${projects.api}/members/${people.grace.id}`)).toMatchObject({ access_level: 20, expires_at: '2098-06-30' });
    // Memberships reach the member's own lists.
    expect((await as('frank')('GET', '/groups?min_access_level=10')).map((g: { id: number }) => g.id)).toContain(groups.platform);
    expect((await as('grace')('GET', '/projects?min_access_level=10')).map((p: { id: number }) => p.id)).toContain(projects.api);
    // Those lists come from the index partitions' copies of the registry rows, which the update
    // pushed there: each row as the registry itself lists it (a search).
    type Row = { id: number; path: string };
    for (const [who, route] of [['frank', 'groups'], ['grace', 'projects']] as const) {
      for (const row of (await as(who)('GET', `/${route}?min_access_level=10`)) as Row[]) {
        const found = ((await as(who)('GET', `/${route}?search=${encodeURIComponent(row.path)}`)) as Row[]).find((r) => r.id === row.id);
        expect(row).toEqual(found);
      }
    }
    expect(await as('alice')('GET', `/projects/${projects.website}/hooks/${fixture.hook.id}`)).toMatchObject({ id: fixture.hook.id });
  });

  it('approves an old request, and the audit log shows the old events and the new one', async () => {
    const { projects } = fixture;
    await as('alice')('PUT', `/projects/${projects.website}/access_requests/${people.bob.id}/approve`, { access_level: 30 }, 201);
    expect(await as('alice')('GET', `/projects/${projects.website}/members/${people.bob.id}`)).toMatchObject({ username: 'bob', access_level: 30 });
    const left = await as('alice')('GET', `/projects/${projects.website}/access_requests`);
    expect(left.map((r: { username: string }) => r.username)).not.toContain('bob');
    expect((await as('alice')('GET', '/access_requests')).length).toBe(fixture.inbox.alice - 1);
    // Alice signs in and approves another old request through her project's page.
    const browser = new WebBrowser(url);
    expect((await browser.signIn('alice', people.alice.password)).status).toBe(303);
    const page = await browser.get('/acme/website');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('carol');
    const csrf = csrfOf(html);
    const approved = await browser.post(`/projects/${projects.website}/-/access_requests/${people.carol.id}/approve`, { authenticity_token: csrf, access_level: '20' });
    expect(approved.status).toBe(303);
    expect(await as('alice')('GET', `/projects/${projects.website}/members/${people.carol.id}`)).toMatchObject({ access_level: 20 });

    // The instance log gets a project's events from the project's outbox: wait for the approval.
    type Event = { id: number; details: { action?: string; target_id?: number } };
    const approvalOfBob = (events: Event[]) => events.some((e) => e.details.action === 'approved' && e.details.target_id === people.bob.id);
    let events: Event[] = [];
    for (const deadline = Date.now() + 30_000; !approvalOfBob(events) && Date.now() < deadline; ) {
      events = await admin()('GET', '/audit_events?per_page=100');
      if (!approvalOfBob(events)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(approvalOfBob(events)).toBe(true);
    const ids = new Set(events.map((e) => e.id));
    for (const old of fixture.audit_events as { id: number }[]) expect(ids.has(old.id), `old event ${old.id}`).toBe(true);
    // The project's own log keeps its old events too (the same events: the same event_id).
    const ownLog: { details: { event_id: string } }[] = await as('alice')('GET', `/projects/${projects.website}/audit_events?per_page=100`);
    const oldOfProject = (fixture.audit_events as { entity_type: string; entity_id: number; details: { event_id: string } }[]).filter(
      (e) => e.entity_type === 'Project' && e.entity_id === projects.website,
    );
    expect(oldOfProject.length).toBeGreaterThan(0);
    expect(ownLog.map((e) => e.details.event_id)).toEqual(expect.arrayContaining(oldOfProject.map((e) => e.details.event_id)));
  });

  it('moves a name renamed after the update: the new one signs in, the old one no longer does', async () => {
    await admin()('PUT', `/users/${people.heidi.id}`, { username: 'heidi-after' }, 200);
    expect((await new WebBrowser(url).signIn('heidi-after', people.heidi.password)).status).toBe(303);
    expect((await new WebBrowser(url).signIn(people.heidi.username, people.heidi.password)).status).toBe(401);
  });
});
