import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InboxAccessRequest, OwnAccessRequest } from '../../shared/api-types';
import { advance } from './support/clock';
import { counted, namespaceCalls } from './support/counted';
import { call, issueToken } from './support/http';
import { addMember, admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';

/**
 * `GET /api/v4/access_requests` (the owners' inbox) and `GET /api/v4/user/access_requests` (the
 * requesters' view): what they list, their ETag, and that they follow every change.
 */

type Created = { id: number; path: string; full_path: string };

const inboxOf = async (who: Person, query = '') => {
  const res = await as(who).get(`/access_requests${query}`);
  expect(res.status).toBe(200);
  return { res, etag: res.headers.get('etag') ?? '', items: (await res.json()) as InboxAccessRequest[] };
};

/** Each request as `Namespace:12:7` (source type, source id, requester id). */
const keysOf = (items: InboxAccessRequest[]) => items.map((i) => `${i.source_type}:${i.source_id}:${i.id}`);
const key = (type: 'Namespace' | 'Project', source: { id: number }, requester: { id: number }) => `${type}:${source.id}:${requester.id}`;

const ownOf = async (who: Person) => {
  const res = await as(who).get('/user/access_requests');
  expect(res.status).toBe(200);
  return (await res.json()) as OwnAccessRequest[];
};

const ask = async (who: Person, route: 'groups' | 'projects', source: { id: number }) =>
  expect((await as(who).post(`/${route}/${source.id}/access_requests`)).status).toBe(201);

const tomorrow = () => new Date(Date.now() + 24 * 3600 * 1000).toISOString().slice(0, 10);

beforeAll(startWorker, 30_000);
const fileStart = new Date().toISOString();

describe('GET /access_requests: every pending request the caller may act on', () => {
  let alice: Person, bob: Person, groupMaintainer: Person, groupDeveloper: Person, instanceAdmin: Person;
  let group: Created, sub: Created, project: Created, bobsProject: Created, elsewhere: Created;
  let requesters: Person[];

  beforeAll(async () => {
    [alice, bob, groupMaintainer, groupDeveloper, instanceAdmin] = await Promise.all([
      person('alice'),
      person('bob'),
      person('gmnt'),
      person('gdev'),
      person('adm', { admin: true }),
    ]);
    group = await createGroup(alice);
    sub = await createGroup(alice, { parent_id: group.id });
    project = await createProject(alice, { namespace_id: group.id });
    bobsProject = await createProject(bob);
    elsewhere = await createProject(bob);
    await addMember('projects', bobsProject.id, alice, 40);
    await addMember('groups', group.id, groupMaintainer, 40);
    await addMember('groups', group.id, groupDeveloper, 30);
    requesters = await Promise.all([person('r'), person('r'), person('r'), person('r'), person('r')]);
    await ask(requesters[0], 'groups', group);
    await ask(requesters[1], 'projects', project);
    await ask(requesters[2], 'groups', sub);
    await ask(requesters[3], 'projects', bobsProject);
    await ask(requesters[4], 'projects', elsewhere);
  }, 60_000);

  it('lists them across groups and projects, inherited ones included, oldest first, each with its source and the highest level grantable', async () => {
    const { items, res } = await inboxOf(alice);
    expect(keysOf(items)).toEqual([
      key('Namespace', group, requesters[0]),
      key('Project', project, requesters[1]),
      key('Namespace', sub, requesters[2]),
      key('Project', bobsProject, requesters[3]),
    ]);
    const times = items.map((i) => i.requested_at);
    expect([...times].sort()).toEqual(times);
    const r = requesters[1];
    expect(items[1]).toEqual({
      id: r.id,
      username: r.username,
      name: r.name,
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `http://knock.test/${r.username}`,
      created_at: items[1].requested_at,
      requested_at: items[1].requested_at,
      source_type: 'Project',
      source_id: project.id,
      source_full_path: project.full_path,
      source_name: project.path,
      max_access_level: 50,
      reason: null,
      access_level: null,
      expires_at: null,
      approvals_required: 1,
      approvals: [],
    });
    // Owner of the group (and, through it, of the subgroup and project); Maintainer of bob's project.
    expect(items.map((i) => i.max_access_level)).toEqual([50, 50, 50, 40]);
    expect(res.headers.get('x-total')).toBe('4');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('shows a group Maintainer only its projects, a Developer nothing, an administrator everything', async () => {
    expect(keysOf((await inboxOf(groupMaintainer)).items)).toEqual([key('Project', project, requesters[1])]);
    expect((await inboxOf(groupMaintainer)).items[0].max_access_level).toBe(40);
    expect((await inboxOf(groupDeveloper)).items).toEqual([]);
    expect((await inboxOf(requesters[0])).items).toEqual([]);
    // Every request made since this file began (the runtime may hold other files' requests too).
    const everything = keysOf((await inboxOf(instanceAdmin, `?per_page=100&min_requested_at=${encodeURIComponent(fileStart)}`)).items);
    for (const [i, source] of [group, project, sub, bobsProject, elsewhere].entries()) {
      expect(everything).toContain(key(i % 2 === 0 && i < 3 ? 'Namespace' : 'Project', source, requesters[i]));
    }
  });

  it('filters by source_type and min_requested_at, and paginates with GitLab headers', async () => {
    expect(keysOf((await inboxOf(alice, '?source_type=Project')).items)).toEqual([
      key('Project', project, requesters[1]),
      key('Project', bobsProject, requesters[3]),
    ]);
    expect(keysOf((await inboxOf(alice, '?source_type=Namespace')).items)).toEqual([
      key('Namespace', group, requesters[0]),
      key('Namespace', sub, requesters[2]),
    ]);
    const all = (await inboxOf(alice)).items;
    const since = all[2].requested_at;
    expect(keysOf((await inboxOf(alice, `?min_requested_at=${encodeURIComponent(since)}`)).items)).toEqual(
      keysOf(all.filter((i) => i.requested_at >= since)),
    );
    expect((await inboxOf(alice, '?min_requested_at=2000-01-01')).items).toHaveLength(4);
    expect((await inboxOf(alice, '?min_requested_at=2999-01-01T00:00:00%2B02:00')).items).toEqual([]);

    const page2 = await inboxOf(alice, '?per_page=3&page=2');
    expect(keysOf(page2.items)).toEqual([key('Project', bobsProject, requesters[3])]);
    expect(Object.fromEntries(['x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'].map((h) => [h, page2.res.headers.get(h)]))).toEqual({
      'x-total': '4',
      'x-total-pages': '2',
      'x-per-page': '3',
      'x-page': '2',
      'x-next-page': '',
      'x-prev-page': '1',
    });
  });

  it('refuses bad filters in GitLab wording', async () => {
    for (const [query, error] of [
      ['?source_type=Group', 'source_type does not have a valid value'],
      ['?min_requested_at=yesterday', 'min_requested_at is invalid'],
      ['?min_requested_at=2026-13-40', 'min_requested_at is invalid'],
      ['?per_page=0', 'per_page is invalid'],
    ]) {
      const res = await as(alice).get(`/access_requests${query}`);
      expect([query, res.status, await res.json()]).toEqual([query, 400, { error }]);
    }
  });

  it('needs a token', async () => {
    const res = await call('/api/v4/access_requests');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: '401 Unauthorized' });
  });
});

describe('the inbox ETag', () => {
  let owner: Person, other: Person;
  let project: Created, othersProject: Created;

  const poll = (who: Person, etag: string, query = '') => counted(`/access_requests${query}`, { ...who.headers, 'If-None-Match': etag });

  beforeAll(async () => {
    [owner, other] = await Promise.all([person('own'), person('oth')]);
    project = await createProject(owner);
    othersProject = await createProject(other);
  });

  it('answers 304 to the current ETag from one call to the caller’s User, no index partition and no group or project object, 200 with a new ETag after each change', async () => {
    const [r1, r2, r3, r4] = await Promise.all([person('r'), person('r'), person('r'), person('r')]);
    let { etag } = await inboxOf(owner);
    expect(etag).toMatch(/^W\/".+"$/);

    const unchanged = await poll(owner, etag);
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect(unchanged.headers.get('cache-control')).toBe('private, no-cache');
    expect(unchanged.calls).toEqual(['User.pollInbox']);

    const steps: [string, () => Promise<unknown>, string[]][] = [
      ['a request', () => ask(r1, 'projects', project), [key('Project', project, r1)]],
      ['a second', () => ask(r2, 'projects', project), [key('Project', project, r1), key('Project', project, r2)]],
      ['an approval', () => as(owner).put(`/projects/${project.id}/access_requests/${r1.id}/approve`), [key('Project', project, r2)]],
      ['a third', () => ask(r3, 'projects', project), [key('Project', project, r2), key('Project', project, r3)]],
      ['a denial', () => as(owner).delete(`/projects/${project.id}/access_requests/${r2.id}`), [key('Project', project, r3)]],
      ['a withdrawal', () => as(r3).delete(`/projects/${project.id}/access_requests/${r3.id}`), []],
    ];
    for (const [what, change, expected] of steps) {
      await change();
      const fresh = await poll(owner, etag);
      expect([what, fresh.status]).toEqual([what, 200]);
      expect(namespaceCalls(fresh.calls)).toEqual([]);
      expect(keysOf(fresh.body)).toEqual(expected);
      const next = fresh.headers.get('etag') ?? '';
      expect(next).not.toBe(etag);
      etag = next;
      expect((await poll(owner, etag)).status).toBe(304);
    }

    // Someone else's requests are not this inbox's change.
    await ask(r4, 'projects', othersProject);
    expect((await poll(owner, etag)).status).toBe(304);
  });

  it('is its own per page and filter, per caller, and honours a list of tags and *', async () => {
    const { etag } = await inboxOf(owner);
    expect((await poll(owner, etag, '?per_page=5')).status).toBe(200);
    expect((await poll(owner, etag, '?source_type=Project')).status).toBe(200);
    expect((await poll(other, etag)).status).toBe(200);
    expect((await poll(owner, `"nonsense", W/"1.2.3", ${etag}`)).status).toBe(304);
    expect((await poll(owner, etag.replace(/^W\//, ''))).status).toBe(304);
    expect((await poll(owner, '*')).status).toBe(304);
    expect((await poll(owner, 'W/"garbage')).status).toBe(200);
  });

  it('asks the User an ETag names before the token is checked only for an ETag that user was given, and answers only the token’s user', async () => {
    const { etag } = await inboxOf(owner);
    expect(etag.startsWith(`W/"${owner.id}.`)).toBe(true);
    // Another user's token with the owner's ETag: the caller's own inbox, never the owner's version.
    const theirs = await poll(other, etag);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('etag')?.startsWith(`W/"${other.id}.`)).toBe(true);
    // A token that proves nobody: 401 alone, whatever was asked beside it.
    const unknown = await counted('/access_requests', { 'PRIVATE-TOKEN': 'not-a-token', 'If-None-Match': etag });
    expect([unknown.status, unknown.body]).toEqual([401, { message: '401 Unauthorized' }]);
    // An ETag naming the owner with a mark this deployment did not make, or no token: no object is asked.
    const forged = etag.replace(/^(W\/"[0-9]+\.[0-9]+\.)[0-9a-f]{16}\./, '$10123456789abcdef.');
    expect(forged).not.toBe(etag);
    const guessed = await counted('/access_requests', { 'PRIVATE-TOKEN': 'not-a-token', 'If-None-Match': forged });
    expect([guessed.status, guessed.calls]).toEqual([401, []]);
    const anonymous = await counted('/access_requests', { 'If-None-Match': etag });
    expect([anonymous.status, anonymous.calls]).toEqual([401, []]);
    // The owner's own poll with the forged mark is not a match either: a fresh answer.
    expect((await poll(owner, forged)).status).toBe(200);
  });
});

describe('the inbox follows members, expiry, settings and requesters', () => {
  it('shows a new Maintainer their project at once, and forgets a removed one', async () => {
    const [owner, maintainer, r] = await Promise.all([person('own'), person('mnt'), person('r')]);
    const project = await createProject(owner);
    await ask(r, 'projects', project);
    const before = await inboxOf(maintainer);
    expect(before.items).toEqual([]);
    expect((await as(owner).post(`/projects/${project.id}/members`, { user_id: maintainer.id, access_level: 40 })).status).toBe(201);
    const added = await inboxOf(maintainer);
    expect(keysOf(added.items)).toEqual([key('Project', project, r)]);
    expect(added.etag).not.toBe(before.etag);
    expect((await as(owner).put(`/projects/${project.id}/members/${maintainer.id}`, { access_level: 30 })).status).toBe(200);
    expect((await inboxOf(maintainer)).items).toEqual([]);
    expect((await as(owner).put(`/projects/${project.id}/members/${maintainer.id}`, { access_level: 40 })).status).toBe(200);
    expect(keysOf((await inboxOf(maintainer)).items)).toEqual([key('Project', project, r)]);
    expect((await as(owner).delete(`/projects/${project.id}/members/${maintainer.id}`)).status).toBe(204);
    expect((await inboxOf(maintainer)).items).toEqual([]);
  });

  it('keeps the projects and drops the group when a group Owner becomes its Maintainer; the level follows', async () => {
    const [owner, coOwner, r1, r2] = await Promise.all([person('own'), person('co'), person('r'), person('r')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await ask(r1, 'groups', group);
    await ask(r2, 'projects', project);
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: coOwner.id, access_level: 50 })).status).toBe(201);
    expect((await inboxOf(coOwner)).items.map((i) => [i.source_type, i.max_access_level])).toEqual([
      ['Namespace', 50],
      ['Project', 50],
    ]);
    expect((await as(owner).put(`/groups/${group.id}/members/${coOwner.id}`, { access_level: 40 })).status).toBe(200);
    expect((await inboxOf(coOwner)).items.map((i) => [i.source_type, i.max_access_level])).toEqual([['Project', 40]]);
  });

  it('drops requests from the day a manager’s membership expires, before the alarm removes it', async () => {
    const [owner, temp, r] = await Promise.all([person('own'), person('tmp'), person('r')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: temp.id, access_level: 50, expires_at: tomorrow() })).status).toBe(201);
    await ask(r, 'projects', project);
    const before = await inboxOf(temp);
    expect(keysOf(before.items)).toEqual([key('Project', project, r)]);
    advance(2 * 24 * 3600);
    const after = await counted('/access_requests', { ...temp.headers, 'If-None-Match': before.etag });
    expect(after.status).toBe(200);
    expect(after.body).toEqual([]);
    // When the alarm then removes the member, nothing more changes.
    expect(await runDurableObjectAlarm(env.NAMESPACES.getByName(String(group.id)))).toBe(true);
    const settled = await counted('/access_requests', { ...temp.headers, 'If-None-Match': after.headers.get('etag') ?? '' });
    expect(settled.status).toBe(304);
    expect(keysOf((await inboxOf(owner)).items)).toEqual([key('Project', project, r)]);
  });

  it('keeps a request at the level left when a higher membership expires, before the alarm removes it', async () => {
    const [owner, temp, r] = await Promise.all([person('own'), person('tmp'), person('r')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    // The project's membership first: GitLab refuses a direct membership below an inherited one.
    expect((await as(owner).post(`/projects/${project.id}/members`, { user_id: temp.id, access_level: 40 })).status).toBe(201);
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: temp.id, access_level: 50, expires_at: tomorrow() })).status).toBe(201);
    await ask(r, 'projects', project);
    const before = await inboxOf(temp);
    expect(before.items.map((i) => [i.source_id, i.id, i.max_access_level])).toEqual([[project.id, r.id, 50]]);
    advance(2 * 24 * 3600);
    const after = await counted('/access_requests', { ...temp.headers, 'If-None-Match': before.etag });
    expect(after.status).toBe(200);
    expect((after.body as InboxAccessRequest[]).map((i) => [i.source_id, i.id, i.max_access_level])).toEqual([[project.id, r.id, 40]]);
    expect(await runDurableObjectAlarm(env.NAMESPACES.getByName(String(group.id)))).toBe(true);
    expect((await counted('/access_requests', { ...temp.headers, 'If-None-Match': after.headers.get('etag') ?? '' })).status).toBe(304);
  });

  it('shows a renamed source by its new name and path, keeps requests when requests are turned off or visibility changes, and drops them when it is deleted', async () => {
    const [owner, r1, r2] = await Promise.all([person('own'), person('r'), person('r')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await ask(r1, 'projects', project);
    await ask(r2, 'groups', group);
    const before = await inboxOf(owner);
    const renamed = await as(owner).put(`/groups/${group.id}`, { path: `${group.full_path}-new`, name: 'Renamed' });
    expect(renamed.status).toBe(200);
    const after = await inboxOf(owner);
    expect(after.etag).not.toBe(before.etag);
    expect(after.items.map((i) => [i.source_full_path, i.source_name])).toEqual([
      [`${group.full_path}-new/${project.path}`, project.path],
      [`${group.full_path}-new`, 'Renamed'],
    ]);

    expect((await as(owner).put(`/projects/${project.id}`, { request_access_enabled: false, visibility: 'private' })).status).toBe(200);
    const settings = await inboxOf(owner);
    expect(keysOf(settings.items)).toEqual(keysOf(after.items));

    expect((await as(owner).delete(`/projects/${project.id}`)).status).toBe(202);
    const deleted = await inboxOf(owner);
    expect(keysOf(deleted.items)).toEqual([key('Namespace', group, r2)]);
    expect(deleted.etag).not.toBe(settings.etag);
  });

  it('drops the requests of a blocked, deactivated or deleted requester, with a new ETag', async () => {
    const [owner, blocked, deactivated, deleted, other] = await Promise.all([person('own'), person('r'), person('r'), person('r'), person('r')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await ask(blocked, 'groups', group);
    for (const r of [blocked, deactivated, deleted, other]) await ask(r, 'projects', project);
    let before = await inboxOf(owner);
    expect(before.items).toHaveLength(5);
    const steps: [string, () => Promise<Response>, Person[]][] = [
      ['block', () => admin.post(`/users/${blocked.id}/block`), [deactivated, deleted, other]],
      ['deactivate', () => admin.post(`/users/${deactivated.id}/deactivate`), [deleted, other]],
      ['delete', () => admin.delete(`/users/${deleted.id}`), [other]],
    ];
    for (const [what, change, left] of steps) {
      expect([what, (await change()).status]).toEqual([what, what === 'delete' ? 204 : 201]);
      const after = await inboxOf(owner);
      expect([what, keysOf(after.items)]).toEqual([what, left.map((r) => key('Project', project, r))]);
      expect(after.etag).not.toBe(before.etag);
      before = after;
    }
  });

  it('shows a renamed requester by their new name, with a new ETag', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const project = await createProject(owner);
    await ask(r, 'projects', project);
    const before = await inboxOf(owner);
    const names = { username: `${r.username}x`, name: 'New Name' };
    expect((await admin.put(`/users/${r.id}`, names)).status).toBe(200);
    const after = await inboxOf(owner);
    expect(after.etag).not.toBe(before.etag);
    expect(after.items.map((i) => [i.username, i.name])).toEqual([[names.username, names.name]]);
  });

  it('shows the new full path of a project in a renamed user’s personal namespace', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const project = await createProject(owner);
    await ask(r, 'projects', project);
    const before = await inboxOf(owner);
    expect((await admin.put(`/users/${owner.id}`, { username: `${owner.username}y` })).status).toBe(200);
    const after = await inboxOf(owner);
    expect(after.etag).not.toBe(before.etag);
    expect(after.items.map((i) => i.source_full_path)).toEqual([`${owner.username}y/${project.path}`]);
  });
});

describe('GET /user/access_requests: the requester’s own requests and how they ended', () => {
  it('lists pending ones and the outcome of the others, without calling any group or project', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const sources = await Promise.all(Array.from({ length: 5 }, () => createProject(owner)));
    const group = await createGroup(owner);
    for (const s of sources) await ask(r, 'projects', s);
    await ask(r, 'groups', group);
    const expiry = new Date(Date.now() + 10 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    expect((await as(owner).put(`/projects/${sources[1].id}/access_requests/${r.id}/approve`, { access_level: 20, expires_at: expiry })).status).toBe(201);
    expect((await as(owner).delete(`/projects/${sources[2].id}/access_requests/${r.id}`)).status).toBe(204);
    expect((await as(r).delete(`/projects/${sources[3].id}/access_requests/${r.id}`)).status).toBe(204);
    expect((await as(owner).post(`/projects/${sources[4].id}/members`, { user_id: r.id, access_level: 10 })).status).toBe(201);

    const res = await counted('/user/access_requests', r.headers);
    expect(res.status).toBe(200);
    expect(namespaceCalls(res.calls)).toEqual([]);
    const own = res.body as OwnAccessRequest[];
    expect(own.map((o) => [o.source_type, o.source_id, o.status, o.access_level, o.expires_at])).toEqual([
      ['Project', sources[0].id, 'pending', null, null],
      ['Project', sources[1].id, 'approved', 20, expiry],
      ['Project', sources[2].id, 'denied', null, null],
      ['Project', sources[3].id, 'withdrawn', null, null],
      ['Project', sources[4].id, 'approved', 10, null],
      ['Namespace', group.id, 'pending', null, null],
    ]);
    expect(own[0]).toEqual({
      source_type: 'Project',
      source_id: sources[0].id,
      source_full_path: sources[0].full_path,
      source_name: sources[0].path,
      requested_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      status: 'pending',
      access_level: null,
      expires_at: null,
      decided_at: null,
      decided_by: null,
      reason: null,
      denial_reason: null,
      requested_access_level: null,
      requested_expires_at: null,
    });
    expect(own[2].decided_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(res.headers.get('x-total')).toBe('6');
  });

  it('reads expired once an approval’s expiry date has come, and forgets outcomes 30 days later', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const [a, b, c] = await Promise.all([createProject(owner), createProject(owner), createProject(owner)]);
    for (const s of [a, b, c]) await ask(r, 'projects', s);
    expect((await as(owner).put(`/projects/${a.id}/access_requests/${r.id}/approve`, { expires_at: tomorrow() })).status).toBe(201);
    expect((await as(owner).delete(`/projects/${b.id}/access_requests/${r.id}`)).status).toBe(204);
    advance(2 * 24 * 3600);
    expect((await ownOf(r)).map((o) => [o.source_id, o.status])).toEqual([
      [a.id, 'expired'],
      [b.id, 'denied'],
      [c.id, 'pending'],
    ]);
    advance(31 * 24 * 3600);
    // A token from before has expired by now.
    const later = { ...r, headers: { 'PRIVATE-TOKEN': await issueToken(r.id, r.username, ['read_api']) } };
    expect((await ownOf(later)).map((o) => [o.source_id, o.status])).toEqual([[c.id, 'pending']]);
  });

  it('hides a private source the requester can no longer see', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const project = await createProject(owner);
    await ask(r, 'projects', project);
    expect(await ownOf(r)).toHaveLength(1);
    expect((await as(owner).put(`/projects/${project.id}`, { visibility: 'private' })).status).toBe(200);
    expect(await ownOf(r)).toEqual([]);
    // Still pending: its owner sees it.
    expect(keysOf((await inboxOf(owner)).items)).toEqual([key('Project', project, r)]);
  });

  it('starts again when a denied requester asks again', async () => {
    const [owner, r] = await Promise.all([person('own'), person('r')]);
    const project = await createProject(owner);
    await ask(r, 'projects', project);
    expect((await admin.delete(`/projects/${project.id}/access_requests/${r.id}`)).status).toBe(204);
    expect((await ownOf(r)).map((o) => o.status)).toEqual(['denied']);
    await ask(r, 'projects', project);
    expect((await ownOf(r)).map((o) => o.status)).toEqual(['pending']);
  });
});
