import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { removePendingRequestsOf } from '../../worker/durable/directory/user-fanout';
import { advance } from './support/clock';
import { expectError } from './support/contract';
import { ADMIN } from './support/http';
import { admin, as, createGroup, createProject, createSource, KIND_ROUTES, person, startWorker, type Person } from './support/namespaces';
import { settle } from './support/receiver';
import { directoryStub } from './support/storage';

beforeAll(startWorker, 30_000);

interface AuditEvent {
  id: number;
  author_id: number;
  entity_id: number;
  entity_type: string;
  event_name: string;
  details: Record<string, unknown>;
  created_at: string;
}

const dateIn = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** A group's or project's audit log (one page of 100), read as `who`. */
const auditLog = async (who: Person | Record<string, string>, path: string, query = ''): Promise<AuditEvent[]> => {
  const res = await as(who).get(`${path}/audit_events?per_page=100${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as AuditEvent[];
};

const namesOf = (events: AuditEvent[]) => events.map((e) => `${e.event_name} ${e.details.target_id}`);

describe.each(KIND_ROUTES)('audit events of %s', (kind) => {
  const label = kind === 'groups' ? 'Group' : 'Project';

  it('records each request and membership change once, with who made it, in GitLab shape, newest first', async () => {
    const [owner, bob, carol, dave, erin] = await Promise.all([person('own'), person('bob'), person('car'), person('dav'), person('eri')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    for (const u of [bob, carol, dave]) expect((await as(u).post(`${base}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`${base}/access_requests/${bob.id}/approve`, { access_level: 20, expires_at: dateIn(30) })).status).toBe(201);
    expect((await as(carol).delete(`${base}/access_requests/${carol.id}`)).status).toBe(204);
    expect((await as(owner).delete(`${base}/access_requests/${dave.id}`)).status).toBe(204);
    expect((await as(owner).post(`${base}/members`, { user_id: erin.id, access_level: 30 })).status).toBe(201);
    expect((await as(owner).put(`${base}/members/${erin.id}`, { access_level: 40, expires_at: dateIn(9) })).status).toBe(200);
    expect((await as(owner).delete(`${base}/members/${erin.id}`)).status).toBe(204);

    const events = await auditLog(owner, base);
    expect(namesOf(events)).toEqual([
      `member_destroyed ${erin.id}`,
      `member_updated ${erin.id}`,
      `member_created ${erin.id}`,
      `access_request_denied ${dave.id}`,
      `access_request_withdrawn ${carol.id}`,
      `access_request_approved ${bob.id}`,
      `access_request_created ${dave.id}`,
      `access_request_created ${carol.id}`,
      `access_request_created ${bob.id}`,
      // The creator became Owner when it was created.
      `member_created ${owner.id}`,
    ]);
    const byName = (name: string, target: number) => events.find((e) => e.event_name === name && e.details.target_id === target);
    const common = { entity_id: source.id, entity_type: label, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) };
    const on = { target_type: 'User', entity_path: source.full_path, event_id: expect.stringMatching(/^[0-9a-f-]{36}$/) };
    expect(byName('access_request_approved', bob.id)).toEqual({
      id: expect.any(Number),
      author_id: owner.id,
      event_name: 'access_request_approved',
      ...common,
      details: { author_name: owner.name, target_id: bob.id, target_details: bob.name, ...on, add: 'user_access', as: 'Reporter', expiry_to: dateIn(30), action: 'approved' },
    });
    expect(byName('access_request_created', bob.id)).toMatchObject({ author_id: bob.id, details: { author_name: bob.name, custom_message: 'Requested access', action: 'requested' } });
    // A withdrawal and a denial are told apart, and each names who did it.
    expect(byName('access_request_withdrawn', carol.id)).toMatchObject({ author_id: carol.id, details: { action: 'withdrawn' } });
    expect(byName('access_request_denied', dave.id)).toMatchObject({ author_id: owner.id, details: { author_name: owner.name, action: 'denied' } });
    // Members changed without their names at hand are named when read.
    expect(byName('member_updated', erin.id)).toMatchObject({
      author_id: owner.id,
      details: { target_details: erin.name, change: 'access_level', from: 'Developer', to: 'Maintainer', expiry_from: null, expiry_to: dateIn(9), action: 'updated' },
    });
    expect(byName('member_destroyed', erin.id)).toMatchObject({ details: { remove: 'user_access', target_details: erin.name, action: 'removed' } });
    expect(new Set(events.map((e) => e.details.event_id)).size).toBe(events.length);
  });

  it('records nothing for a change that was refused or did not happen', async () => {
    const [owner, bob, stranger] = await Promise.all([person('own'), person('bob'), person('str')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    expect((await as(bob).post(`${base}/access_requests`)).status).toBe(201);
    const before = await auditLog(owner, base);
    await expectError(await as(stranger).put(`${base}/access_requests/${bob.id}/approve`), 403);
    await expectError(await as(owner).put(`${base}/access_requests/${bob.id}/approve?access_level=0`), 400);
    await expectError(await as(bob).post(`${base}/access_requests`), 400);
    await expectError(await as(owner).delete(`${base}/access_requests/${stranger.id}`), 404);
    await expectError(await as(owner).delete(`${base}/members/${stranger.id}`), 404);
    if (kind === 'groups') await expectError(await as(owner).delete(`${base}/members/${owner.id}`), 403);
    expect((await as(owner).put(`${base}/access_requests/${bob.id}/approve`)).status).toBe(201);
    await expectError(await as(owner).put(`${base}/access_requests/${bob.id}/approve`), 404);
    const after = await auditLog(owner, base);
    expect(namesOf(after)).toEqual([`access_request_approved ${bob.id}`, ...namesOf(before)]);
  });

  it('pages newest first with GitLab headers, and filters by created_after and created_before', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const early = await person('early');
    expect((await as(early).post(`${base}/access_requests`)).status).toBe(201);
    advance(3600);
    const middle = new Date(Date.now() + 1800_000).toISOString();
    const late = await person('late');
    expect((await as(late).post(`${base}/access_requests`)).status).toBe(201);

    const page = await as(owner).get(`${base}/audit_events?per_page=1&page=2`);
    expect(page.status).toBe(200);
    expect(page.headers.get('X-Total')).toBe('3');
    expect(page.headers.get('X-Total-Pages')).toBe('3');
    expect(page.headers.get('X-Next-Page')).toBe('3');
    expect(namesOf((await page.json()) as AuditEvent[])).toEqual([`access_request_created ${early.id}`]);

    expect(namesOf(await auditLog(owner, base, `&created_after=${middle}`))).toEqual([`access_request_created ${late.id}`]);
    expect(namesOf(await auditLog(owner, base, `&created_before=${encodeURIComponent(middle)}`))).toEqual([
      `access_request_created ${early.id}`,
      `member_created ${owner.id}`,
    ]);
    await expectError(await as(owner).get(`${base}/audit_events?created_after=yesterday`), 400, { error: 'created_after is invalid' });
  });

  // GitLab's audit events API docs (https://docs.gitlab.com/api/audit_events/): a group's Owners
  // read every user's events, its Developers and Maintainers only those of their own actions; a
  // project's Maintainers and Owners every user's, its Developers their own. Below Developer: 403.
  it(`gives ${kind === 'groups' ? 'Owners' : 'Maintainers and Owners'} and administrators every event, a Developer${kind === 'groups' ? ' or Maintainer' : ''} their own`, async () => {
    const [owner, reader, dev, maintainer, reporter, stranger] = await Promise.all(['own', 'rdr', 'dev', 'mnt', 'rep', 'str'].map((p) => person(p)));
    const source = await createSource(kind, owner, { visibility: 'private' });
    const base = `/${kind}/${source.id}`;
    const all = kind === 'groups' ? 50 : 40;
    expect((await admin.post(`${base}/members`, { user_id: reader.id, access_level: all })).status).toBe(201);
    expect((await admin.post(`${base}/members`, { user_id: reporter.id, access_level: 20 })).status).toBe(201);
    // Their own actions: asking for access (the approval is the owner's).
    await admin.put(base, { visibility: 'public' });
    for (const [who, level] of [[dev, 30], [maintainer, 40]] as const) {
      expect((await as(who).post(`${base}/access_requests`)).status).toBe(201);
      expect((await as(owner).put(`${base}/access_requests/${who.id}/approve?access_level=${level}`)).status).toBe(201);
    }
    await admin.put(base, { visibility: 'private' });
    const everything = await auditLog(reader, base);
    expect(everything.length).toBeGreaterThan(4);
    expect(await auditLog(ADMIN, base)).toEqual(everything);
    const own = (who: Person) => everything.filter((e) => e.author_id === who.id);
    expect(own(dev).map((e) => e.event_name)).toEqual(['access_request_created']);

    const readers = kind === 'groups' ? [dev, maintainer] : [dev];
    for (const who of readers) {
      expect(await auditLog(who, base), who.username).toEqual(own(who));
      expect((await as(who).get(`${base}/audit_events/${own(who)[0].id}`)).status).toBe(200);
      const notTheirs = everything.find((e) => e.author_id !== who.id)!;
      await expectError(await as(who).get(`${base}/audit_events/${notTheirs.id}`), 404, { message: '404 Not found' });
    }
    if (kind === 'projects') expect(await auditLog(maintainer, base)).toEqual(everything);
    await expectError(await as(reporter).get(`${base}/audit_events`), 403, { message: '403 Forbidden' });
    await expectError(await as(stranger).get(`${base}/audit_events`), 404, { message: `404 ${label} Not Found` });
  });

  it('answers one event by the id its log lists it with, to the same people, and 404 for an id it does not have', async () => {
    const [owner, bob, below, stranger] = await Promise.all([person('own'), person('bob'), person('blw'), person('str')]);
    const source = await createSource(kind, owner, { visibility: 'private' });
    const base = `/${kind}/${source.id}`;
    expect((await as(owner).post(`${base}/members`, { user_id: below.id, access_level: 20 })).status).toBe(201);
    expect((await as(owner).post(`${base}/members`, { user_id: bob.id, access_level: 20 })).status).toBe(201);
    const [latest] = await auditLog(owner, base);
    const res = await as(owner).get(`${base}/audit_events/${latest.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(latest);
    expect(latest).toMatchObject({ event_name: 'member_created', details: { target_id: bob.id } });
    expect((await admin.get(`${base}/audit_events/${latest.id}`)).status).toBe(200);
    await expectError(await as(owner).get(`${base}/audit_events/${latest.id + 1000}`), 404, { message: '404 Not found' });
    await expectError(await as(owner).get(`${base}/audit_events/abc`), 400, { error: 'audit_event_id is invalid' });
    await expectError(await as(below).get(`${base}/audit_events/${latest.id}`), 403, { message: '403 Forbidden' });
    await expectError(await as(stranger).get(`${base}/audit_events/${latest.id}`), 404, { message: `404 ${label} Not Found` });
  });

  it('records a membership that expired, by the system (author -1)', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    expect((await as(owner).post(`${base}/members`, { user_id: bob.id, access_level: 30, expires_at: dateIn(1) })).status).toBe(201);
    advance(2 * 86_400);
    expect(await runDurableObjectAlarm(env.NAMESPACES.getByName(String(source.id)))).toBe(true);
    const [expired] = await auditLog(owner, base);
    expect(expired).toMatchObject({
      author_id: -1,
      event_name: 'member_expired',
      details: { author_name: 'System', target_id: bob.id, target_details: bob.name, remove: 'user_access', custom_message: 'Membership expired', action: 'expired' },
    });
  });

  it('records settings changes, one per attribute, in the transaction of the change', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    expect((await as(owner).put(base, { name: 'Renamed', request_access_enabled: false })).status).toBe(200);
    const [first, second] = await auditLog(owner, base);
    expect([first, second].map((e) => e.details)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ change: 'name', from: source.path, to: 'Renamed', author_name: owner.name, target_type: label, target_id: source.id, action: 'settings_changed' }),
        expect.objectContaining({ change: 'request_access_enabled', from: 'true', to: 'false', action: 'settings_changed' }),
      ]),
    );
    expect(first.event_name).toBe('settings_updated');

    // The Directory keeps the event with the change until the object has it: had the call that
    // hands it over never come, its alarm does.
    const directory = env.DIRECTORY.getByName('directory');
    const updated = await directory.updateNamespace(kind === 'groups' ? 'group' : 'project', source.id, { description: 'Kept' }, { id: owner.id, username: owner.username, name: owner.name });
    expect(updated.ok).toBe(true);
    expect((await auditLog(owner, base)).filter((e) => e.details.change === 'description')).toEqual([]);
    expect(await runDurableObjectAlarm(directoryStub())).toBe(true);
    expect((await auditLog(owner, base)).filter((e) => e.details.change === 'description')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ from: '', to: 'Kept', author_name: owner.name }) }),
    ]);
  });

  it('records the removal of a blocked or deleted user’s request, by the system', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    expect((await as(bob).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    expect(await removePendingRequestsOf(env, bob.id, [source.id])).toBe(1);
    const [discarded] = await auditLog(owner, `/${kind}/${source.id}`);
    expect(discarded).toMatchObject({ author_id: -1, event_name: 'access_request_discarded', details: { target_id: bob.id, action: 'discarded' } });
  });

  it('records hook changes, showing the URL without its credentials or query', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}`;
    const created = await as(owner).post(`${base}/hooks`, { url: 'https://user:pass@hooks.example.com/knock?key=secret', token: 'tok' });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: number };
    expect((await as(owner).put(`${base}/hooks/${hook.id}`, { member_events: false })).status).toBe(200);
    expect((await as(owner).delete(`${base}/hooks/${hook.id}`)).status).toBe(204);
    const events = (await auditLog(owner, base)).slice(0, 3);
    expect(events.map((e) => [e.event_name, e.details.target_type, e.details.target_id, e.details.target_details])).toEqual([
      ['webhook_destroyed', `${label}Hook`, hook.id, 'https://hooks.example.com/knock'],
      ['webhook_updated', `${label}Hook`, hook.id, 'https://hooks.example.com/knock'],
      ['webhook_created', `${label}Hook`, hook.id, 'https://hooks.example.com/knock'],
    ]);
    expect(JSON.stringify(events)).not.toMatch(/pass|secret|tok/);
  });
});

describe('logs above a group or project', () => {
  it("a group's log includes its subgroups' and projects' events; the instance log has everything", async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const top = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: top.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    expect((await as(bob).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    expect((await as(bob).post(`/groups/${sub.id}/access_requests`)).status).toBe(201);
    // Each object's alarm copies its events up to its ancestors and the instance log.
    await settle(project.id, sub.id, top.id);

    const inTop = await auditLog(owner, `/groups/${top.id}`);
    expect(inTop.slice(0, 2).map((e) => [e.event_name, e.entity_type, e.entity_id, e.details.entity_path])).toEqual([
      ['access_request_created', 'Group', sub.id, sub.full_path],
      ['access_request_created', 'Project', project.id, project.full_path],
    ]);
    const inSub = await auditLog(owner, `/groups/${sub.id}`);
    expect(inSub.filter((e) => e.event_name === 'access_request_created').map((e) => e.entity_id)).toEqual([sub.id, project.id]);
    // Not the other way round: a project's log has only its own.
    expect((await auditLog(owner, `/projects/${project.id}`)).every((e) => e.entity_id === project.id)).toBe(true);
    // Copies are the same events (same id as their webhook-id), each once.
    const uuids = inTop.map((e) => e.details.event_id);
    expect(new Set(uuids).size).toBe(uuids.length);
    await settle(project.id, sub.id);
    expect((await auditLog(owner, `/groups/${top.id}`)).length).toBe(inTop.length);

    const all = await admin.get(`/audit_events?entity_type=Project&entity_id=${project.id}&per_page=100`);
    expect(all.status).toBe(200);
    const instanceEvents = (await all.json()) as AuditEvent[];
    expect(instanceEvents.map((e) => e.event_name)).toEqual(['access_request_created', 'member_created']);
    await expectError(await as(owner).get('/audit_events'), 403, { message: '403 Forbidden' });

    // One instance event by the id the instance log lists it with.
    const [request] = instanceEvents;
    const one = await admin.get(`/audit_events/${request.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(request);
    await expectError(await as(owner).get(`/audit_events/${request.id}`), 403, { message: '403 Forbidden' });
    await expectError(await admin.get('/audit_events/999999999'), 404, { message: '404 Not found' });
  });

  // GitLab's audit events API (https://docs.gitlab.com/api/audit_events/) lists the rows of one
  // audit_events table, so an event has one id whichever route lists it.
  it('gives an event one id in every log that has it, and finds it by that id in each', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const top = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: top.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    expect((await as(bob).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    await settle(project.id, sub.id, top.id);

    const logs = [`/projects/${project.id}`, `/groups/${sub.id}`, `/groups/${top.id}`];
    const requestIn = async (path: string) => (await auditLog(owner, path)).find((e) => e.event_name === 'access_request_created' && e.entity_id === project.id)!;
    const instance = (await (await admin.get(`/audit_events?entity_type=Project&entity_id=${project.id}`)).json()) as AuditEvent[];
    const copies = [...(await Promise.all(logs.map(requestIn))), instance.find((e) => e.event_name === 'access_request_created')!];
    expect(new Set(copies.map((e) => e.details.event_id)).size).toBe(1);
    expect(copies.map((e) => e.id)).toEqual(copies.map(() => copies[0].id));
    for (const path of logs) expect(await (await as(owner).get(`${path}/audit_events/${copies[0].id}`)).json()).toEqual(copies[0]);
    expect(await (await admin.get(`/audit_events/${copies[0].id}`)).json()).toEqual(copies[0]);
    // Ids are unique across logs: the project's own creation event is another.
    const created = (await auditLog(owner, logs[0])).find((e) => e.event_name === 'member_created')!;
    expect(created.id).not.toBe(copies[0].id);
    expect((await admin.get(`/audit_events/${created.id}`)).status).toBe(200);
  });
});
