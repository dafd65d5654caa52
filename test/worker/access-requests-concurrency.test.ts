import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import type { NamespaceRef } from '../../worker/durable/namespace/types';
import { unique } from './support/http';
import { indexedMembership, indexedPendingRequests } from './support/indexes';
import { treeIndex } from '../../worker/durable/index-partition/index-partition';
import { admin, as, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';

beforeAll(startWorker, 30_000);

describe.each(KIND_ROUTES)('races on %s', (kind) => {
  it('concurrent approve, deny and withdraw of one request leave exactly one winner', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    for (let round = 0; round < 5; round++) {
      const requester = await person('req');
      expect((await as(requester).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
      const path = `/${kind}/${source.id}/access_requests/${requester.id}`;
      const responses = await Promise.all([
        as(owner).put(`${path}/approve?access_level=40`),
        as(owner).delete(path),
        as(requester).delete(path),
        admin.put(`${path}/approve?access_level=20`),
        admin.delete(path),
      ]);
      const winners = responses.filter((r) => r.status === 201 || r.status === 204);
      expect(winners).toHaveLength(1);
      for (const loser of responses.filter((r) => !winners.includes(r))) {
        expect(loser.status).toBe(404);
        expect(await loser.json()).toEqual({ message: '404 Not found' });
      }
      const pending = (await (await as(owner).get(`/${kind}/${source.id}/access_requests?per_page=100`)).json()) as { id: number }[];
      expect(pending.map((r) => r.id)).not.toContain(requester.id);
      const members = (await (await as(owner).get(`/${kind}/${source.id}/members?per_page=100`)).json()) as { id: number }[];
      expect(members.some((m) => m.id === requester.id)).toBe(winners[0].status === 201);
    }
  });

  it('concurrent requests by one user leave exactly one record', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const requester = await person('req');
    const responses = await Promise.all(Array.from({ length: 10 }, () => as(requester).post(`/${kind}/${source.id}/access_requests`)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of responses.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ message: { user_id: ['already exists in source'] } });
    }
    const list = await as(owner).get(`/${kind}/${source.id}/access_requests`);
    expect(list.headers.get('X-Total')).toBe('1');
  });
});

describe('one path, many creators', () => {
  it('exactly one of simultaneous creations of a path wins', async () => {
    const creators = await Promise.all([person('a'), person('b'), person('c'), person('d')]);
    const path = unique('race');
    const variants = [path, path.toUpperCase(), path, `${path[0].toUpperCase()}${path.slice(1)}`];
    const responses = await Promise.all(creators.map((u, i) => as(u).post('/groups', { name: variants[i], path: variants[i] })));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of responses.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ message: { path: ['has already been taken'] } });
    }
  });

  it('a project path cannot take the full path of a subgroup', async () => {
    const owner = await person('own');
    const group = (await (await as(owner).post('/groups', { name: 'G', path: unique('g') })).json()) as { id: number };
    expect((await as(owner).post('/groups', { name: 'sub', path: 'same', parent_id: group.id })).status).toBe(201);
    const res = await as(owner).post('/projects', { name: 'same', path: 'Same', namespace_id: group.id });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: { path: ['has already been taken'] } });
  });
});

/** Approves inside the namespace object while its pushes to the index partitions fail. */
const approveWhileDirectoryIsDown = (stub: DurableObjectStub<Namespace>, ref: NamespaceRef, ownerId: number, requesterId: number, level: number) =>
  runInDurableObject(stub, async (instance: Namespace) => {
    const self = instance as unknown as { env: typeof env };
    const realEnv = self.env;
    const unreachable = { getByName: () => ({ applyChanges: () => Promise.reject(new Error('index unreachable')) }) };
    self.env = { ...realEnv, INDEX_PARTITIONS: unreachable as unknown as typeof env.INDEX_PARTITIONS };
    try {
      expect((await instance.approveAccessRequest(ref, { userId: ownerId, admin: false, inherited: 0 }, requesterId, { accessLevel: level })).ok).toBe(true);
    } finally {
      self.env = realEnv;
    }
  });

describe('the membership index', () => {
  it('follows approvals: the new member sees the project at their level', async () => {
    const owner = await person('own');
    const source = await createSource('projects', owner, { visibility: 'private' });
    const requester = await person('req');
    // A private project is invisible to outsiders (they cannot ask), so the request is seeded.
    expect((await as(requester).get(`/projects/${source.id}`)).status).toBe(404);
    const stub = env.NAMESPACES.getByName(String(source.id));
    await runInDurableObject(stub, (_i: Namespace, state) => {
      state.storage.sql.exec('INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?)', requester.id, new Date().toISOString(), requester.username, requester.username);
    });
    expect((await as(owner).put(`/projects/${source.id}/access_requests/${requester.id}/approve?access_level=40`)).status).toBe(201);
    const mine = (await (await as(requester).get('/projects?min_access_level=40')).json()) as { id: number }[];
    expect(mine.map((p) => p.id)).toContain(source.id);
    expect((await as(requester).get(`/projects/${source.id}`)).status).toBe(200);
    expect(await indexedMembership(source.id, requester.id)).toMatchObject({ access_level: 40 });
  });

  it('keeps a change the index could not take in the outbox, and the alarm delivers it', async () => {
    const owner = await person('own');
    const source = await createSource('projects', owner);
    const requester = await person('req');
    expect((await as(requester).post(`/projects/${source.id}/access_requests`)).status).toBe(201);
    const stub = env.NAMESPACES.getByName(String(source.id));
    const ref: NamespaceRef = { id: source.id, kind: 'project', creatorId: owner.id, createdAt: new Date().toISOString(), snapshot: { visibility: 'private', request_access_enabled: true, full_path: '', name: '', version: 0 }, byPath: false };

    await approveWhileDirectoryIsDown(stub, ref, owner.id, requester.id, 30);
    await runInDurableObject(stub, async (_i: Namespace, state) => {
      // The new member, and the request's removal for the requester index.
      expect(state.storage.sql.exec("SELECT entry FROM outbox ORDER BY version").toArray().map((r) => r.entry)).toEqual(['request', 'member']);
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    // The member exists in the project; the index has not heard of it yet, and still lists the request.
    expect(await indexedMembership(source.id, requester.id)).toBeNull();
    expect(await indexedPendingRequests(requester.id)).toEqual([{ id: source.id, kind: 'project' }]);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await indexedMembership(source.id, requester.id)).toMatchObject({ access_level: 30 });
    expect(await indexedPendingRequests(requester.id)).toEqual([]);
    await runInDurableObject(stub, async (_i: Namespace, state) => {
      expect(state.storage.sql.exec('SELECT COUNT(*) AS n FROM outbox').one().n).toBe(0);
      expect(await state.storage.getAlarm()).toBeNull();
    });
  });

  it('delivers a waiting change before members/all reads the index, without waiting for the alarm', async () => {
    const owner = await person('own');
    const source = await createSource('projects', owner);
    const requester = await person('req');
    expect((await as(requester).post(`/projects/${source.id}/access_requests`)).status).toBe(201);
    const stub = env.NAMESPACES.getByName(String(source.id));
    const ref: NamespaceRef = { id: source.id, kind: 'project', creatorId: owner.id, createdAt: new Date().toISOString(), snapshot: { visibility: 'private', request_access_enabled: true, full_path: '', name: '', version: 0 }, byPath: false };
    await approveWhileDirectoryIsDown(stub, ref, owner.id, requester.id, 40);
    expect(await indexedMembership(source.id, requester.id)).toBeNull();

    const all = (await (await as(owner).get(`/projects/${source.id}/members/all`)).json()) as { id: number; access_level: number }[];
    expect(all).toContainEqual(expect.objectContaining({ id: requester.id, access_level: 40 }));
    await runInDurableObject(stub, (_i: Namespace, state) => {
      expect(state.storage.sql.exec('SELECT COUNT(*) AS n FROM outbox').one().n).toBe(0);
    });
  });

  it('ignores a replayed older change (versions only move forward)', async () => {
    const owner = await person('own');
    const source = await createSource('groups', owner);
    const index = treeIndex(env, source.id, []);
    const copy = { id: source.id, kind: 'group' as const, name: 'g', full_path: 'g', visibility: 'private', version: 1, ancestorIds: [] };
    await index.applyChanges(copy, [{ userId: 424242, accessLevel: 40, createdAt: 'x', createdBy: null, version: 7 }], [], []);
    await index.applyChanges(copy, [{ userId: 424242, accessLevel: 10, createdAt: 'x', createdBy: null, version: 6 }], [], []);
    await index.applyChanges(copy, [{ userId: 424242, accessLevel: 40, createdAt: 'x', createdBy: null, version: 7 }], [], []);
    expect(await index.membershipOf(source.id, 424242)).toEqual({ access_level: 40, version: 7 });
  });
});
