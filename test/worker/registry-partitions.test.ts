import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { forgetPath, forgetRecord } from '../../worker/services/registry-cache';
import { indexPartition, type IndexPartition } from '../../worker/durable/index-partition/index-partition';
import { partitionCount, partitionOfId } from '../../worker/durable/partitions';
import { recordedFetch } from './support/counted';
import { unique } from './support/http';
import { admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';

/**
 * An isolate that does not know a group or project (its registry cache missed) finds it in the
 * index partitions' copies of the registry rows (by id: the id's partition is the tree's; by
 * full path: the top-level path's partition names the tree), not in the Directory. The copies are a hint,
 * as the isolate's cache is: when they do not know a row, or know an older one, the Directory
 * answers, so a copy behind never hides a group or project nor finds one by a path it left.
 */

beforeAll(startWorker, 30_000);

/** This isolate forgets what it knows of these, as an isolate that never met them. */
const forget = (...targets: { id: number; full_path: string }[]) => {
  for (const t of targets) {
    forgetRecord(t.id);
    forgetPath(t.full_path);
  }
};

/** A request from a fresh isolate cache: its status, and which classes it called. */
const lookUp = async (who: Person, path: string) => {
  const { response, calls } = await recordedFetch(`/api/v4${path}`, { headers: who.headers });
  return { status: response.status, classes: [...new Set(calls.map((c) => c.cls))].sort() };
};

const treeOf = (rootId: number) => indexPartition(env, partitionOfId(rootId, partitionCount(env)));

describe('finding groups and projects in the index partitions', () => {
  it('finds a group, a subgroup and a project by id and by full path in any case, without the Directory', async () => {
    const owner = await person('fo');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    for (const [route, target] of [['groups', group], ['groups', sub], ['projects', project]] as const) {
      for (const ref of [String(target.id), encodeURIComponent(target.full_path.toUpperCase())]) {
        forget(group, sub, project);
        const found = await lookUp(owner, `/${route}/${ref}/access_requests`);
        expect(found, `${route}/${ref}`).toEqual({ status: 200, classes: ['IndexPartition', 'Namespace'] });
      }
    }
  });

  it("gives every row of a tree an id in its root's partition, and finds each by id in one call to that partition", async () => {
    const owner = await person('fi');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const subSub = await createGroup(owner, { parent_id: sub.id });
    const project = await createProject(owner, { namespace_id: subSub.id });
    const personal = await createProject(owner);
    const { namespace: personalRoot } = (await (await as(owner).get(`/projects/${personal.id}`)).json()) as { namespace: { id: number; kind: string } };
    expect(personalRoot.kind).toBe('user');
    const rows = [
      ['groups', group, group.id],
      ['groups', sub, group.id],
      ['groups', subSub, group.id],
      ['projects', project, group.id],
      ['projects', personal, personalRoot.id],
    ] as const;
    for (const [route, target, root] of rows) {
      const partition = partitionOfId(root, partitionCount(env));
      expect(partitionOfId(target.id, partitionCount(env)), target.full_path).toBe(partition);
      forget(group, sub, subSub, project, personal);
      const { response, calls } = await recordedFetch(`/api/v4/${route}/${target.id}/access_requests`, { headers: owner.headers });
      expect(response.status, target.full_path).toBe(200);
      const asked = calls.filter((c) => c.cls !== 'Namespace').map((c) => `${c.cls} ${c.key} ${c.method}`);
      expect(asked, target.full_path).toEqual([`IndexPartition index:${partition} locate`]);
    }
  });

  it("finds a personal project by its owner's path", async () => {
    const owner = await person('fp');
    const project = await createProject(owner);
    forget(project);
    const found = await lookUp(owner, `/projects/${encodeURIComponent(project.full_path)}/access_requests`);
    expect(found.status).toBe(200);
    expect(found.classes).not.toContain('Directory');
  });

  it('answers 404 at the path a rename left and finds the new one, also below, with nothing cached', async () => {
    const owner = await person('fr');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const path = unique('moved');
    expect((await as(owner).put(`/groups/${group.id}`, { path })).status).toBe(200);
    forget(group, project);
    expect((await lookUp(owner, `/groups/${encodeURIComponent(group.full_path)}/members`)).status).toBe(404);
    expect((await lookUp(owner, `/projects/${encodeURIComponent(project.full_path)}/members`)).status).toBe(404);
    forget(group, project);
    const moved = await lookUp(owner, `/projects/${encodeURIComponent(`${path}/${project.path}`)}/access_requests`);
    expect(moved).toMatchObject({ status: 200 });
    expect(moved.classes).not.toContain('Directory');
    // The old top-level path taken by a new group leads to it, not to the renamed one.
    const again = await createGroup(owner, { path: group.path, name: group.path });
    forget(group, again);
    const found = await as(owner).get(`/groups/${encodeURIComponent(group.full_path)}`);
    expect(((await found.json()) as { id: number }).id).toBe(again.id);
  });

  it('answers 404 for a deleted project and for ids and paths never made', async () => {
    const owner = await person('fd');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    expect((await as(owner).delete(`/projects/${project.id}`)).status).toBe(202);
    forget(project);
    expect((await lookUp(owner, `/projects/${project.id}/members`)).status).toBe(404);
    expect((await lookUp(owner, `/projects/${encodeURIComponent(project.full_path)}/members`)).status).toBe(404);
    expect((await lookUp(owner, '/projects/999999999/members')).status).toBe(404);
    expect((await lookUp(owner, `/groups/${unique('never')}/members`)).status).toBe(404);
  });

  it('asks the Directory when a copy is missing, and never follows a copy older than the object', async () => {
    const owner = await person('fs');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    // A partition that lost its copy of the project (a push still to come): found by the Directory.
    await runInDurableObject(treeOf(group.id), (_i: IndexPartition, state) => {
      state.storage.sql.exec('DELETE FROM namespaces WHERE id = ?', project.id);
    });
    forget(project);
    const missing = await lookUp(owner, `/projects/${project.id}/access_requests`);
    expect(missing.status).toBe(200);
    expect(missing.classes).toContain('Directory');

    // A partition whose copy of the group is still at the path it had before a rename (the push
    // failed and waits for the alarm): the group's object knows better, and the Directory answers.
    const path = unique('renamed');
    expect((await as(owner).put(`/groups/${group.id}`, { path })).status).toBe(200);
    await runInDurableObject(treeOf(group.id), (_i: IndexPartition, state) => {
      state.storage.sql.exec('UPDATE namespaces SET full_path = ?, path = ?, version = version - 1 WHERE id = ?', group.full_path, group.path, group.id);
      state.storage.sql.exec('INSERT INTO registry_tops (path, root_id) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET root_id = excluded.root_id', group.path, group.id);
    });
    forget(group);
    expect((await lookUp(owner, `/groups/${encodeURIComponent(group.full_path)}/members`)).status).toBe(404);
    forget(group);
    expect(await lookUp(owner, `/groups/${encodeURIComponent(path)}/access_requests`)).toEqual({ status: 200, classes: ['Directory', 'IndexPartition', 'Namespace'] });
  });
});

describe("a group's row from its tree's index partition", () => {
  it('shows the copy when it is as new as what the finder found, and the Directory row while the copy is behind', async () => {
    const owner = await person('fg');
    const group = await createGroup(owner, { description: 'first' });
    expect((await as(owner).put(`/groups/${group.id}`, { description: 'second' })).status).toBe(200);
    forget(group);
    const shown = async () => {
      const { response, calls } = await recordedFetch(`/api/v4/groups/${group.id}`, { headers: owner.headers });
      return { description: ((await response.json()) as { description: string }).description, directory: calls.some((c) => c.cls === 'Directory') };
    };
    expect(await shown()).toEqual({ description: 'second', directory: false });

    // A change made through this isolate, whose copy in the partition is still to come.
    const put = await recordedFetch(`/api/v4/groups/${group.id}`, {
      method: 'PUT',
      headers: { ...owner.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ description: 'third' }),
    });
    expect(put.response.status).toBe(200);
    await runInDurableObject(treeOf(group.id), (_i: IndexPartition, state) => {
      state.storage.sql.exec("UPDATE namespaces SET description = 'second', version = version - 1 WHERE id = ?", group.id);
    });
    expect(await shown()).toEqual({ description: 'third', directory: true });
  });
});

describe("members' names from the tree's index partition", () => {
  it('asks the Directory for a member once, then shows their rename and block from the copy', async () => {
    const owner = await person('mo');
    const member = await person('mm');
    const group = await createGroup(owner);
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: member.id, access_level: 30 })).status).toBe(201);
    const listed = async (path: string) => {
      const { response, calls } = await recordedFetch(`/api/v4/groups/${group.id}/${path}`, { headers: owner.headers });
      const members = (await response.json()) as { username: string; name: string; state: string }[];
      return { members: members.map((m) => [m.username, m.name, m.state]).sort(), directory: calls.some((c) => c.cls === 'Directory') };
    };
    await listed('members');
    const before = [
      [owner.username, owner.name, 'active'],
      [member.username, member.name, 'active'],
    ].sort();
    expect(await listed('members')).toEqual({ members: before, directory: false });
    expect(await listed('members/all')).toEqual({ members: before, directory: false });

    const renamed = `${member.username}-r`;
    expect((await admin.put(`/users/${member.id}`, { username: renamed, name: 'Renamed Member' })).status).toBe(200);
    expect((await admin.post(`/users/${member.id}/block`)).status).toBe(201);
    const after = [
      [owner.username, owner.name, 'active'],
      [renamed, 'Renamed Member', 'blocked'],
    ].sort();
    expect(await listed('members')).toEqual({ members: after, directory: false });
    expect(await listed('members/all')).toEqual({ members: after, directory: false });
  });
});
