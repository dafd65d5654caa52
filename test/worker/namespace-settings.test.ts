import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Directory } from '../../worker/durable/directory/directory';
import { snapshotOf } from '../../worker/durable/namespace-registry';
import { cachedRecord, forgetRecord, rememberRecord } from '../../worker/services/registry-cache';
import { expectError } from './support/contract';
import { indexedPendingRequests } from './support/indexes';
import { unique } from './support/http';
import { admin, as, createGroup, createProject, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';

beforeAll(startWorker, 30_000);

describe.each(KIND_ROUTES)('PUT /%s/:id', (kind) => {
  it('changes name, description and request_access_enabled; answers the updated entity', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const res = await as(owner).put(`/${kind}/${source.id}`, { name: 'Renamed', description: 'About', request_access_enabled: false });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: source.id, name: 'Renamed', description: 'About', request_access_enabled: false });
    expect(await (await admin.get(`/${kind}/${source.id}`)).json()).toMatchObject({ name: 'Renamed', request_access_enabled: false });
  });

  it('turning requests off refuses new ones (403) and keeps pending ones listable and actionable', async () => {
    const [owner, early, late] = await Promise.all([person('own'), person('early'), person('late')]);
    const source = await createSource(kind, owner);
    expect((await as(early).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`/${kind}/${source.id}`, { request_access_enabled: false })).status).toBe(200);
    await expectError(await as(late).post(`/${kind}/${source.id}/access_requests`), 403, { message: '403 Forbidden' });
    const pending = (await (await as(owner).get(`/${kind}/${source.id}/access_requests`)).json()) as { id: number }[];
    expect(pending.map((p) => p.id)).toEqual([early.id]);
    expect((await as(owner).put(`/${kind}/${source.id}/access_requests/${early.id}/approve`)).status).toBe(201);
  });

  it('refuses visibility above the parent, and refuses non-managers', async () => {
    const [owner, dev] = await Promise.all([person('own'), person('dev')]);
    const parent = await createGroup(owner, { visibility: 'internal' });
    const source = kind === 'groups' ? await createGroup(owner, { parent_id: parent.id, visibility: 'internal' }) : await createProject(owner, { namespace_id: parent.id, visibility: 'internal' });
    await expectError(await as(owner).put(`/${kind}/${source.id}`, { visibility: 'public' }), 400, {
      message: { visibility_level: ['public is not allowed since the namespace has internal visibility'] },
    });
    expect((await admin.post(`/${kind}/${source.id}/members`, { user_id: dev.id, access_level: 30 })).status).toBe(201);
    await expectError(await as(dev).put(`/${kind}/${source.id}`, { name: 'x' }), 403, { message: '403 Forbidden' });
    await expectError(await as(owner).put(`/${kind}/${source.id}`, { visibility: 'secret' }), 400, { error: 'visibility does not have a valid value' });
  });

  it('making it private hides it from outsiders at once', async () => {
    const [owner, stranger] = await Promise.all([person('own'), person('str')]);
    const source = await createSource(kind, owner);
    expect((await as(stranger).get(`/${kind}/${source.id}`)).status).toBe(200);
    expect((await as(owner).put(`/${kind}/${source.id}`, { visibility: 'private' })).status).toBe(200);
    await expectError(await as(stranger).get(`/${kind}/${source.id}/members`), 404);
    await expectError(await as(stranger).post(`/${kind}/${source.id}/access_requests`), 404);
  });
});

describe('projects: Maintainers edit settings, Owners path and visibility', () => {
  it('lets a Maintainer rename but not move or change visibility', async () => {
    const [owner, maintainer] = await Promise.all([person('own'), person('mnt')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    expect((await admin.post(`/projects/${project.id}/members`, { user_id: maintainer.id, access_level: 40 })).status).toBe(201);
    expect((await as(maintainer).put(`/projects/${project.id}`, { name: 'By maintainer' })).status).toBe(200);
    await expectError(await as(maintainer).put(`/projects/${project.id}`, { visibility: 'private' }), 403, { message: '403 Forbidden' });
    await expectError(await as(maintainer).put(`/projects/${project.id}`, { path: unique('np') }), 403, { message: '403 Forbidden' });
  });
});

describe('renaming a path', () => {
  it('keeps the id, frees the old path, moves everything below, and the old path answers 404 at once', async () => {
    const owner = await person('own');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    // Known to this isolate by their old paths.
    for (const p of [group.full_path, sub.full_path]) expect((await as(owner).get(`/groups/${encodeURIComponent(p)}`)).status).toBe(200);
    expect((await as(owner).get(`/projects/${encodeURIComponent(project.full_path)}`)).status).toBe(200);

    const newPath = unique('ren');
    const res = await as(owner).put(`/groups/${group.id}`, { path: newPath });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: group.id, path: newPath, full_path: newPath });

    await expectError(await as(owner).get(`/groups/${encodeURIComponent(group.full_path)}`), 404, { message: '404 Group Not Found' });
    await expectError(await as(owner).get(`/groups/${encodeURIComponent(sub.full_path)}/access_requests`), 404, { message: '404 Group Not Found' });
    await expectError(await as(owner).get(`/projects/${encodeURIComponent(project.full_path)}/members`), 404, { message: '404 Project Not Found' });
    expect(await (await as(owner).get(`/groups/${encodeURIComponent(`${newPath}/${sub.path}`)}`)).json()).toMatchObject({ id: sub.id, full_path: `${newPath}/${sub.path}` });
    expect(await (await as(owner).get(`/projects/${encodeURIComponent(`${newPath}/${sub.path}/${project.path}`)}`)).json()).toMatchObject({
      id: project.id,
      path_with_namespace: `${newPath}/${sub.path}/${project.path}`,
    });
    // The old path can be taken by a new group.
    const again = await as(owner).post('/groups', { name: 'again', path: group.full_path, visibility: 'public' });
    expect(again.status).toBe(201);
    const reborn = (await again.json()) as { id: number };
    expect(await (await as(owner).get(`/groups/${encodeURIComponent(group.full_path)}`)).json()).toMatchObject({ id: reborn.id });
  });

  it("another isolate's cached path (an older version) is refused by the object and looked up again", async () => {
    const owner = await person('own');
    const group = await createGroup(owner);
    expect((await as(owner).get(`/groups/${encodeURIComponent(group.full_path)}/members`)).status).toBe(200);
    const before = cachedRecord(group.id)!;
    const newPath = unique('iso');
    expect((await as(owner).put(`/groups/${group.id}`, { path: newPath, visibility: 'private' })).status).toBe(200);
    // What an isolate that did not make the change still holds.
    forgetRecord(group.id);
    rememberRecord(before);
    await expectError(await as(owner).get(`/groups/${encodeURIComponent(group.full_path)}/members`), 404, { message: '404 Group Not Found' });
    rememberRecord(before);
    // By id, the stale copy's settings lose to the object's newer ones: private now.
    const stranger = await person('str');
    await expectError(await as(stranger).get(`/groups/${group.id}/members`), 404, { message: '404 Group Not Found' });
    expect((await as(owner).get(`/groups/${encodeURIComponent(newPath)}/members`)).status).toBe(200);
  });

  it("a project's new path is found at once, and its old path answers 404 also where an isolate still remembers it", async () => {
    const owner = await person('own');
    const project = await createProject(owner, { namespace_id: (await createGroup(owner)).id });
    expect((await as(owner).get(`/projects/${encodeURIComponent(project.full_path)}/access_requests`)).status).toBe(200);
    const before = cachedRecord(project.id)!;
    const newPath = unique('mv');
    expect((await as(owner).put(`/projects/${project.id}`, { path: newPath })).status).toBe(200);
    const moved = `${project.full_path.slice(0, project.full_path.lastIndexOf('/'))}/${newPath}`;
    expect(await (await as(owner).get(`/projects/${encodeURIComponent(moved)}`)).json()).toMatchObject({ id: project.id, path_with_namespace: moved });
    await expectError(await as(owner).get(`/projects/${encodeURIComponent(project.full_path)}/members`), 404, { message: '404 Project Not Found' });
    forgetRecord(project.id);
    rememberRecord(before);
    await expectError(await as(owner).get(`/projects/${encodeURIComponent(project.full_path)}/access_requests`), 404, { message: '404 Project Not Found' });
  });

  it('refuses a taken path, and lowering visibility below a child', async () => {
    const owner = await person('own');
    const [a, b] = await Promise.all([createGroup(owner), createGroup(owner)]);
    await expectError(await as(owner).put(`/groups/${a.id}`, { path: b.path.toUpperCase() }), 400, { message: { path: ['has already been taken'] } });
    await createProject(owner, { namespace_id: a.id, visibility: 'public' });
    await expectError(await as(owner).put(`/groups/${a.id}`, { visibility: 'private' }), 400, {
      message: { visibility_level: ['private is not allowed since this group contains projects with higher visibility.'] },
    });
  });
});

describe.each(KIND_ROUTES)('DELETE /%s/:id', (kind) => {
  it('deletes with members and pending requests (202); the id and path answer 404; the path is free', async () => {
    const [owner, req, dev] = await Promise.all([person('own'), person('req'), person('dev')]);
    const source = await createSource(kind, owner);
    expect((await as(req).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    expect((await admin.post(`/${kind}/${source.id}/members`, { user_id: dev.id, access_level: 40 })).status).toBe(201);
    await expectError(await as(dev).delete(`/${kind}/${source.id}`), 403, { message: '403 Forbidden' });
    const res = await as(owner).delete(`/${kind}/${source.id}`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ message: '202 Accepted' });
    const notFound = { message: kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found' };
    await expectError(await as(owner).get(`/${kind}/${source.id}`), 404, notFound);
    await expectError(await as(owner).get(`/${kind}/${encodeURIComponent(source.full_path)}/access_requests`), 404, notFound);
    expect(await indexedPendingRequests(req.id)).toEqual([]);
    const mine = (await (await as(dev).get(`/${kind}?membership=true&min_access_level=10`)).json()) as { id: number }[];
    expect(mine.map((x) => x.id)).not.toContain(source.id);
  });
});

describe('DELETE a group with something in it', () => {
  it('is refused with 400 until its subgroups and projects are gone', async () => {
    const owner = await person('own');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await expectError(await as(owner).delete(`/groups/${group.id}`), 400);
    expect((await as(owner).get(`/groups/${group.id}`)).status).toBe(200);
    expect((await as(owner).delete(`/projects/${project.id}`)).status).toBe(202);
    expect((await as(owner).delete(`/groups/${group.id}`)).status).toBe(202);
  });
});

describe('the requester index', () => {
  it('knows where a user waits; blocking the user empties every owner list', async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: (await createGroup(owner)).id });
    expect((await as(req).post(`/groups/${group.id}/access_requests`)).status).toBe(201);
    expect((await as(req).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    expect(await indexedPendingRequests(req.id)).toEqual([
      { id: group.id, kind: 'group' },
      { id: project.id, kind: 'project' },
    ]);
    expect((await admin.post(`/users/${req.id}/block`)).status).toBe(201);
    for (const path of [`/groups/${group.id}`, `/projects/${project.id}`]) {
      const pending = (await (await as(owner).get(`${path}/access_requests`)).json()) as { id: number }[];
      expect(pending.map((p) => p.id)).not.toContain(req.id);
    }
    expect(await indexedPendingRequests(req.id)).toEqual([]);
  });

  it('follows approvals and withdrawals; renaming the user (PUT /users/:id) renames the stored names', async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const [a, b] = await Promise.all([createGroup(owner), createGroup(owner)]);
    for (const g of [a, b]) expect((await as(req).post(`/groups/${g.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`/groups/${a.id}/access_requests/${req.id}/approve`)).status).toBe(201);
    expect(await indexedPendingRequests(req.id)).toEqual([{ id: b.id, kind: 'group' }]);
    expect((await admin.put(`/users/${req.id}`, { username: `${req.username}x`, name: 'New Name' })).status).toBe(200);
    const listed = (await (await as(owner).get(`/groups/${b.id}/access_requests`)).json()) as { id: number; username: string; name: string }[];
    expect(listed.find((r) => r.id === req.id)).toMatchObject({ username: `${req.username}x`, name: 'New Name' });
    expect((await as(req).delete(`/groups/${b.id}/access_requests/${req.id}`)).status).toBe(204);
    expect(await indexedPendingRequests(req.id)).toEqual([]);
  });
});

/**
 * A change of a registry row whose handing-over never ran: the Directory's transaction committed,
 * then the Worker went away. What the triggers queued in that transaction (`registry_outbox`) is
 * all the Directory's alarm has to finish it by.
 */
describe("a registry change left queued by a crash", () => {
  const directory = () => env.DIRECTORY.getByName('directory');
  const committedOnly = (sql: string, id: number) =>
    runInDurableObject(directory(), async (_i: Directory, state) => {
      state.storage.sql.exec(sql, id);
      await state.storage.setAlarm(Date.now());
    });

  it("reaches the group's object from the Directory's alarm, also where an isolate still caches the row as it was", async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const group = await createGroup(owner);
    expect((await as(req).get(`/groups/${group.id}`)).status).toBe(200);
    const before = cachedRecord(group.id)!.snapshot.version;
    await committedOnly('UPDATE namespaces SET request_access_enabled = 0, version = version + 1 WHERE id = ?', group.id);
    expect(await runDurableObjectAlarm(directory())).toBe(true);
    // This isolate still has the row as it was; the object judges by its own copy, now the newer.
    expect(cachedRecord(group.id)!.snapshot.version).toBe(before);
    await expectError(await as(req).post(`/groups/${group.id}/access_requests`), 403, { message: '403 Forbidden' });
  });

  it("is finished by the Directory's alarm for a deletion: the group answers 404 and leaves its members' lists", async () => {
    const [owner, dev] = await Promise.all([person('own'), person('dev')]);
    const group = await createGroup(owner);
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: dev.id, access_level: 30 })).status).toBe(201);
    await committedOnly('DELETE FROM namespaces WHERE id = ?', group.id);
    forgetRecord(group.id);
    expect(await runDurableObjectAlarm(directory())).toBe(true);
    forgetRecord(group.id);
    await expectError(await as(dev).get(`/groups/${group.id}`), 404, { message: '404 Group Not Found' });
    const mine = (await (await as(dev).get('/groups?min_access_level=10')).json()) as { id: number }[];
    expect(mine.map((g) => g.id)).not.toContain(group.id);
  });

  /** A group's row as the Directory creates it, without the object's first call that follows, and what an isolate caches of it. */
  const rowWithoutObject = async (owner: { id: number }) => {
    const path = unique('g');
    const row = await directory().createNamespace({
      kind: 'group', name: path, path, parentId: null, visibility: 'public', requestAccessEnabled: true, description: '', creatorId: owner.id,
    });
    if (!row.ok) throw new Error('the group was not created');
    const { value } = row;
    return { id: value.id, record: { id: value.id, kind: 'group' as const, creatorId: owner.id, createdAt: value.created_at, ancestorIds: [], snapshot: snapshotOf(value) } };
  };

  it('reaches a group whose object was never set up (a crash before its first call): its first call judges by the newer row', async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const { id, record } = await rowWithoutObject(owner);
    await committedOnly('UPDATE namespaces SET request_access_enabled = 0, version = version + 1 WHERE id = ?', id);
    expect(await runDurableObjectAlarm(directory())).toBe(true);
    // An isolate still holding the row as created calls the object with it, its first call.
    rememberRecord(record);
    await expectError(await as(req).post(`/groups/${id}/access_requests`), 403, { message: '403 Forbidden' });
    expect((await as(owner).get(`/groups/${id}/members`)).status).toBe(200);
  });

  it('sets up a group whose object was never set up once when its first calls come together: each answers, and the creator is its one Owner', async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const { id, record } = await rowWithoutObject(owner);
    // Both calls wait for the registry's row while setting up (another call runs meanwhile).
    rememberRecord(record);
    const [members, request] = await Promise.all([as(owner).get(`/groups/${id}/members`), as(req).post(`/groups/${id}/access_requests`)]);
    expect([members.status, request.status]).toEqual([200, 201]);
    const listed = (await (await as(owner).get(`/groups/${id}/members`)).json()) as { id: number; access_level: number }[];
    expect(listed.map((m) => [m.id, m.access_level])).toEqual([[owner.id, 50]]);
  });

  it('reaches a group whose object was never set up (a crash before its first call): an isolate still holding the row finds it gone', async () => {
    const owner = await person('own');
    const { id, record } = await rowWithoutObject(owner);
    await committedOnly('DELETE FROM namespaces WHERE id = ?', id);
    expect(await runDurableObjectAlarm(directory())).toBe(true);
    // The object, told though it was never set up, took the row out of its tree's index partition.
    const partition = env.INDEX_PARTITIONS.getByName(`index:${id % 64}`);
    expect(await runInDurableObject(partition, (_i, state) => state.storage.sql.exec('SELECT id FROM namespaces WHERE id = ?', id).toArray())).toEqual([]);
    // An isolate still holding the row calls the object with it: the object must not come alive.
    rememberRecord(record);
    await expectError(await as(owner).post(`/groups/${id}/access_requests`), 404, { message: '404 Group Not Found' });
    rememberRecord(record);
    await expectError(await as(owner).get(`/groups/${id}/members`), 404, { message: '404 Group Not Found' });
  });
});
