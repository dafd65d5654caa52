import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import { advance } from './support/clock';
import { indexedMembership } from './support/indexes';
import { addMember, admin, as, createGroup, createProject, person, type Person } from './support/namespaces';

/**
 * acme (group: owner O, maintainer M, developer D)
 * ├── acme/sub (subgroup)      └── acme/sub/deep (project)
 * └── acme/site (project)
 */
describe('inherited membership', () => {
  let O: Person, M: Person, D: Person;
  let acme: { id: number }, sub: { id: number }, site: { id: number }, deep: { id: number };

  beforeAll(async () => {
    [O, M, D] = await Promise.all([person('own'), person('mnt'), person('dev')]);
    acme = await createGroup(O);
    sub = await createGroup(O, { parent_id: acme.id });
    site = await createProject(O, { namespace_id: acme.id });
    deep = await createProject(O, { namespace_id: sub.id });
    await addMember('groups', acme.id, M, 40);
    await addMember('groups', acme.id, D, 30);
  }, 30_000);

  const pendingOn = async (kind: 'groups' | 'projects', id: number) => {
    const user = await person('req');
    expect((await as(user).post(`/${kind}/${id}/access_requests`)).status).toBe(201);
    return user;
  };

  it("a group Owner manages the requests of the group's projects and subgroups", async () => {
    // O is a direct member of each (creator); take a second owner who is only a group member.
    const heir = await person('heir');
    await addMember('groups', acme.id, heir, 50);
    for (const [kind, target] of [['groups', sub], ['projects', site], ['projects', deep]] as const) {
      const requester = await pendingOn(kind, target.id);
      expect((await as(heir).get(`/${kind}/${target.id}/access_requests`)).status).toBe(200);
      expect((await as(heir).put(`/${kind}/${target.id}/access_requests/${requester.id}/approve?access_level=50`)).status).toBe(201);
      const other = await pendingOn(kind, target.id);
      expect((await as(heir).delete(`/${kind}/${target.id}/access_requests/${other.id}`)).status).toBe(204);
    }
  });

  it("a group Maintainer manages its projects' requests (Maintainer+), not its subgroups' (Owner)", async () => {
    const onProject = await pendingOn('projects', deep.id);
    expect((await as(M).get(`/projects/${deep.id}/access_requests`)).status).toBe(200);
    expect((await as(M).put(`/projects/${deep.id}/access_requests/${onProject.id}/approve?access_level=50`)).status).toBe(403);
    expect((await as(M).put(`/projects/${deep.id}/access_requests/${onProject.id}/approve`)).status).toBe(201);
    const onGroup = await pendingOn('groups', sub.id);
    expect((await as(M).get(`/groups/${sub.id}/access_requests`)).status).toBe(403);
    expect((await as(M).put(`/groups/${sub.id}/access_requests/${onGroup.id}/approve`)).status).toBe(403);
  });

  it('a group Developer cannot manage requests below, and cannot request what they already have', async () => {
    expect((await as(D).get(`/projects/${site.id}/access_requests`)).status).toBe(403);
    for (const [kind, id] of [['groups', sub.id], ['projects', site.id], ['projects', deep.id]] as const) {
      const res = await as(D).post(`/${kind}/${id}/access_requests`);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ message: '403 Forbidden' });
    }
  });

  it("asks the group itself for an inherited level: a membership whose date has come counts for nothing, whatever the index still says", async () => {
    const group = await createGroup(O);
    const project = await createProject(O, { namespace_id: group.id });
    const temp = await person('tmp');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await as(O).post(`/groups/${group.id}/members`, { user_id: temp.id, access_level: 40, expires_at: tomorrow })).status).toBe(201);
    expect((await as(temp).get(`/projects/${project.id}/access_requests`)).status).toBe(200);

    // Two days on, before the group's alarm has removed the member: the membership index still
    // holds the row (it learns of the expiry only from the group's outbox).
    advance(2 * 86_400);
    expect(await indexedMembership(group.id, temp.id)).toMatchObject({ access_level: 40 });
    const refused = await as(temp).get(`/projects/${project.id}/access_requests`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ message: '403 Forbidden' });
  });

  it('members/all lists inherited members at their highest level; members lists direct ones', async () => {
    const direct = (await (await as(D).get(`/projects/${deep.id}/members`)).json()) as { id: number }[];
    expect(direct.map((m) => m.id)).toContain(O.id);
    expect(direct.map((m) => m.id)).not.toContain(M.id);
    expect(direct.map((m) => m.id)).not.toContain(D.id);
    const all = (await (await as(D).get(`/projects/${deep.id}/members/all?per_page=100`)).json()) as { id: number; access_level: number }[];
    expect(all).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: O.id, access_level: 50 }),
        expect.objectContaining({ id: M.id, access_level: 40 }),
        expect.objectContaining({ id: D.id, access_level: 30 }),
      ]),
    );
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length);
  });

  it('min_access_level counts inherited levels', async () => {
    const ids = async (who: Person, path: string) => ((await (await as(who).get(path)).json()) as { id: number }[]).map((x) => x.id);
    expect(await ids(D, '/projects?min_access_level=30&per_page=100')).toEqual(expect.arrayContaining([site.id, deep.id]));
    expect(await ids(D, '/projects?min_access_level=40&per_page=100')).not.toContain(site.id);
    expect(await ids(M, '/projects?min_access_level=40&per_page=100')).toEqual(expect.arrayContaining([site.id, deep.id]));
    expect(await ids(O, '/groups?min_access_level=50&per_page=100')).toEqual(expect.arrayContaining([acme.id, sub.id]));
    expect(await ids(M, '/groups?min_access_level=50&per_page=100')).not.toContain(sub.id);
    expect(await ids(D, '/projects?membership=true&per_page=100')).toEqual(expect.arrayContaining([site.id, deep.id]));
  });

  it('inherited members see private projects and subgroups below', async () => {
    const hidden = await createGroup(O, { visibility: 'private' });
    const inner = await createProject(O, { namespace_id: hidden.id, visibility: 'private' });
    const reader = await person('rdr');
    expect((await as(reader).get(`/projects/${inner.id}`)).status).toBe(404);
    // Outsiders cannot see the group to ask, so the reader's request is seeded.
    const stranger = await person('str');
    expect((await as(stranger).post(`/groups/${hidden.id}/access_requests`)).status).toBe(404);
    await addMemberPrivately(hidden.id, reader);
    expect((await as(reader).get(`/projects/${inner.id}`)).status).toBe(200);
    expect((await as(stranger).get(`/projects/${inner.id}`)).status).toBe(404);
  });
});

/** A private group's member, added through a request seeded in its Durable Object. */
const addMemberPrivately = async (groupId: number, user: Person) => {
  await runInDurableObject(env.NAMESPACES.getByName(String(groupId)), (_i: Namespace, state) => {
    state.storage.sql.exec('INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?)', user.id, new Date().toISOString(), user.username, user.username);
  });
  expect((await admin.put(`/groups/${groupId}/access_requests/${user.id}/approve?access_level=10`)).status).toBe(201);
};
