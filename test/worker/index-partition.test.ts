import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DEVELOPER, MAINTAINER, OWNER } from '../../shared/access-levels';
import { DELETED_VERSION } from '../../worker/durable/directory/types';
import { userObject } from '../../worker/durable/user/user';
import type { IndexPartition, SourceCopy } from '../../worker/durable/index-partition/index-partition';
import type { MembershipChange, RequestChange } from '../../worker/durable/namespace-registry';

/**
 * One partition of the membership, requester and inbox indexes, driven the way the namespaces'
 * objects and the user fan-out drive it: the inbox it keeps for a tree's managers
 * (read from each manager's `User`, where it delivers it), the copies of names and states it shows,
 * and what it tells a pushing object to correct.
 */

/** Partitions no group's tree routes to (the count is at most 1,024), one per test. */
let next = 2_000;
const partition = () => env.INDEX_PARTITIONS.getByName(`index:${next++}`);

/** The ids of one test's users (storage is shared by the file's tests): `as(10)` is this test's user 10. */
let people = 0;
const users = () => {
  const base = 100_000 * ++people;
  return (n: number) => base + n;
};

const group = (id: number, name = `g${id}`): SourceCopy => ({ id, kind: 'group', name, full_path: name, visibility: 'private', version: 1, ancestorIds: [] });
const project = (id: number, parent: SourceCopy, name = `p${id}`): SourceCopy => ({
  id,
  kind: 'project',
  name,
  full_path: `${parent.full_path}/${name}`,
  visibility: 'private',
  version: 1,
  ancestorIds: [parent.id, ...parent.ancestorIds],
});
const member = (userId: number, accessLevel: number, version: number): MembershipChange => ({ userId, accessLevel, createdAt: '2026-01-01T00:00:00.000Z', createdBy: null, version });
const request = (userId: number, pending: boolean, version: number, requestedAt = '2026-01-02T00:00:00.000Z'): RequestChange => ({
  userId,
  pending,
  version,
  requestedAt,
  outcome: pending ? null : 'denied',
  grantedLevel: null,
  expiresAt: null,
  decidedBy: null,
  decidedAt: pending ? null : '2026-01-03T00:00:00.000Z',
  details: null,
});
const names = (userId: number, version = 1) => ({ userId, username: `u${userId}`, name: `User ${userId}`, version });

/** A manager's inbox, as their `User` holds it, each request as `<source path>:<requester>:<level>`. */
const inboxOf = async (userId: number) => {
  const { version, page } = await userObject(env, userId).inbox({}, 0, 20, null);
  return { version, items: page?.items.map((i) => `${i.source_full_path}:${i.username}:${i.access_level}`) ?? [] };
};

describe('an index partition', () => {
  it('shows a request in a group to the Owners above it, with the names copied in, and takes it away when decided', async () => {
    const p = partition();
    const u = users();
    const g = group(1);
    const pr = project(2, g);
    await p.applyChanges(g, [member(u(10), OWNER, 1)], [], []);
    await p.applyChanges(pr, [member(u(11), MAINTAINER, 1)], [], []);
    await p.applyChanges(pr, [], [request(u(20), true, 2)], [names(u(20))]);
    expect((await inboxOf(u(10))).items).toEqual([`g1/p2:u${u(20)}:50`]);
    expect((await inboxOf(u(11))).items).toEqual([`g1/p2:u${u(20)}:40`]);
    const before = (await inboxOf(u(10))).version;
    expect((await userObject(env, u(10)).inbox({}, 0, 20, before)).page).toBeNull();

    await p.applyChanges(pr, [member(u(20), DEVELOPER, 4)], [{ ...request(u(20), false, 3), outcome: 'approved', grantedLevel: DEVELOPER, decidedAt: new Date().toISOString() , details: null}], []);
    expect(await inboxOf(u(10))).toEqual({ version: before + 1, items: [] });
    expect((await p.ownRequests(u(20), false)).map((r) => [r.source_full_path, r.outcome])).toEqual([['g1/p2', 'approved']]);
    expect(await p.membershipOf(1, u(10))).toEqual({ access_level: OWNER, version: 1 });
    // Each user with rows here was told so in their User object before the push answered.
    for (const user of [u(10), u(11), u(20)]) expect(await userObject(env, user).indexPartitions()).toContain(next - 1);
  });

  it('applies each change once, oldest never over newest, and forgets a deleted group or project for good', async () => {
    const p = partition();
    const g = group(1);
    await p.applyChanges(g, [member(10, OWNER, 2)], [], []);
    await p.applyChanges(g, [member(10, DEVELOPER, 1)], [], []);
    expect(await p.membershipOf(1, 10)).toEqual({ access_level: OWNER, version: 2 });
    await p.deleteSource(1);
    await p.applyChanges(g, [member(11, OWNER, 3)], [request(20, true, 4)], [names(20)]);
    expect(await p.membershipOf(1, 11)).toBeNull();
    expect(await p.pendingRequestsOf(20)).toEqual([]);
  });

  it('follows a rename of the source and of the requester, and hides a blocked requester', async () => {
    const p = partition();
    const u = users();
    const g = group(1);
    await p.applyChanges(g, [member(u(10), OWNER, 1)], [request(u(20), true, 2)], [names(u(20))]);
    const v1 = (await inboxOf(u(10))).version;
    await p.applyChanges({ ...g, name: 'renamed', full_path: 'renamed', version: 2 }, [], [], []);
    await p.applyChanges({ ...g, name: 'older', full_path: 'older', version: 1 }, [], [], []);
    const renamed = await inboxOf(u(10));
    expect(renamed.items).toEqual([`renamed:u${u(20)}:50`]);
    expect(renamed.version).toBeGreaterThan(v1);

    const requester = { id: u(20), username: 'u20-new', name: 'New', email: null, admin: false, created_at: '', builtin: false, two_factor_enabled: false };
    expect(await p.applyUser({ ...requester, state: 'active', version: 2 })).toEqual({ pendingIn: [1], memberOf: [] });
    expect((await inboxOf(u(10))).items).toEqual(['renamed:u20-new:50']);
    await p.applyUser({ ...requester, state: 'blocked', version: 3 });
    expect((await inboxOf(u(10))).items).toEqual([]);
    // A push that raced the block is told to remove the request.
    expect(await p.applyChanges(g, [], [request(u(20), true, 5)], [names(u(20), 1)])).toEqual({ departed: [], inactive: [u(20)], requesters: [] });
  });

  it("learns a user change fanned out before it held the user's rows from their User, before it answers the push", async () => {
    const p = partition();
    const here = next - 1;
    const u = users();
    const g = group(1);
    await p.applyChanges(g, [member(u(10), OWNER, 1)], [], []);
    const user = (id: number, state: 'active' | 'blocked', version: number) => ({ id, username: `u${id}-new`, name: 'New', email: null, admin: false, state, created_at: '', version, builtin: false, two_factor_enabled: false });
    // Renamed while no partition held rows of theirs: the fan-out reached their User alone.
    const renamed = 900 + here;
    expect(await userObject(env, renamed).applyUser(user(renamed, 'active', 2))).toEqual([]);
    // A request pushed with the names from before the rename is answered with the new ones.
    expect(await p.applyChanges(g, [], [request(renamed, true, 2)], [names(renamed, 1)])).toEqual({
      departed: [],
      inactive: [],
      requesters: [{ userId: renamed, username: `u${renamed}-new`, name: 'New', version: 2 }],
    });
    expect((await inboxOf(u(10))).items).toEqual([`g1:u${renamed}-new:50`]);
    // Their next change finds this partition listed.
    expect(await userObject(env, renamed).applyUser(user(renamed, 'active', 3))).toEqual([here]);
    // Blocked while no partition held rows of theirs: the push is told to remove the request.
    const blocked = 901 + here;
    expect(await userObject(env, blocked).applyUser(user(blocked, 'blocked', 2))).toEqual([]);
    expect(await p.applyChanges(g, [], [request(blocked, true, 3)], [names(blocked, 1)])).toEqual({ departed: [], inactive: [blocked], requesters: [] });
    expect((await inboxOf(u(10))).items).toEqual([`g1:u${renamed}-new:50`]);
  });

  it('tells a pushing object which new members were deleted meanwhile, and finds sole Owners', async () => {
    const p = partition();
    const g = group(1);
    await p.applyChanges(g, [member(10, OWNER, 1), member(11, OWNER, 2)], [], []);
    expect(await p.soleOwnedGroups(10)).toEqual([]);
    await p.applyUser({ id: 11, state: 'deleted', version: DELETED_VERSION });
    expect(await p.soleOwnedGroups(10)).toEqual([1]);
    expect((await p.applyChanges(g, [member(11, DEVELOPER, 3)], [], [])).departed).toEqual([11]);
  });

  it("lists itself in a newcomer's User when the push is retried after a crash between its commit and the registration", async () => {
    const p = partition();
    const here = next - 1;
    const u = users();
    const g = group(1);
    // The push commits, and the partition stops before it tells the member's `User` (a crash):
    // what `applyChanges` commits first, alone; the pushing object keeps the change in its outbox.
    await runInDurableObject(p, (instance: IndexPartition) => {
      expect(instance['applyLocally'](g, [member(u(10), OWNER, 1)], [], [])).toBe(true);
    });
    expect(await userObject(env, u(10)).indexPartitions()).toEqual([]);
    // The object's alarm pushes the same change again.
    await p.applyChanges(g, [member(u(10), OWNER, 1)], [], []);
    expect(await userObject(env, u(10)).indexPartitions()).toEqual([here]);
  });

  it("delivers a change to its managers' inboxes from its alarm after a crash between its commit and the sending", async () => {
    const p = partition();
    const u = users();
    const g = group(1);
    const pr = project(2, g);
    await p.applyChanges(g, [member(u(10), OWNER, 1)], [], []);
    await p.applyChanges(pr, [member(u(11), MAINTAINER, 1)], [request(u(20), true, 2)], [names(u(20))]);
    const before = await inboxOf(u(10));
    // The approval's push commits, and the partition stops before it sends anything (a crash): what
    // `applyChanges` commits first, alone.
    const approval = { ...request(u(20), false, 3), outcome: 'approved' as const, grantedLevel: DEVELOPER, decidedAt: new Date().toISOString() , details: null};
    await runInDurableObject(p, (instance: IndexPartition) => {
      expect(instance['applyLocally'](pr, [member(u(20), DEVELOPER, 4)], [approval], [])).toBe(true);
    });
    expect(await inboxOf(u(10))).toEqual(before);
    expect((await inboxOf(u(11))).items).toEqual([`g1/p2:u${u(20)}:40`]);
    // The alarm committed with the change sends it.
    expect(await runDurableObjectAlarm(p)).toBe(true);
    expect(await inboxOf(u(10))).toEqual({ version: before.version + 1, items: [] });
    expect((await inboxOf(u(11))).items).toEqual([]);
    // Nothing is left for it to do.
    expect(await runDurableObjectAlarm(p)).toBe(false);
  });
});
