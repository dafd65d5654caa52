import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Directory } from '../../worker/durable/directory/directory';
import { partitionCount, partitionOfId } from '../../worker/durable/partitions';
import { admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';

/**
 * `GET /groups?min_access_level=…` and `GET /projects?membership=true` (the dashboard's "Your
 * groups" and "Your projects", and most clients' first call) are read from the index partitions
 * of the user's trees, which keep copies of the registry rows. Each list here is compared with the
 * same rows as the Directory's registry lists them (a search, which the partitions do not answer),
 * right after each kind of change, so a copy that lags or lacks a field shows.
 */

type Listed = { id: number; name: string; full_path?: string; path_with_namespace?: string; [field: string]: unknown };

beforeAll(startWorker, 30_000);

const list = async (who: Person, path: string): Promise<{ rows: Listed[]; total: string | null }> => {
  const res = await as(who).get(path);
  expect(res.status).toBe(200);
  return { rows: (await res.json()) as Listed[], total: res.headers.get('x-total') };
};

/** Each row as the registry lists it: found by a search for its path. */
const fromRegistry = async (who: Person, route: 'groups' | 'projects', rows: Listed[]): Promise<Listed[]> =>
  Promise.all(
    rows.map(async (row) => {
      const path = String(row.path);
      const found = (await list(who, `/${route}?search=${encodeURIComponent(path)}&per_page=100`)).rows.find((r) => r.id === row.id);
      if (!found) throw new Error(`the registry has no ${route} row ${row.id} (${path})`);
      return found;
    }),
  );

const expectSameAsRegistry = async (who: Person, route: 'groups' | 'projects', rows: Listed[]) => {
  expect(rows).toEqual(await fromRegistry(who, route, rows));
};

describe("lists of what a user reaches, from their trees' index partitions", () => {
  it('show a new group, subgroup and project at once, field for field as the registry has them', async () => {
    const owner = await person('lo');
    const group = await createGroup(owner, { description: 'the top' });
    const sub = await createGroup(owner, { parent_id: group.id, description: 'below' });
    const project = await createProject(owner, { namespace_id: sub.id, description: 'code' });

    const groups = await list(owner, '/groups?min_access_level=50');
    expect(groups.rows.map((g) => g.id)).toEqual([group.id, sub.id]);
    expect(groups.total).toBe('2');
    await expectSameAsRegistry(owner, 'groups', groups.rows);
    const projects = await list(owner, '/projects?membership=true');
    expect(projects.rows.map((p) => [p.id, p.path_with_namespace])).toEqual([[project.id, `${group.full_path}/${sub.path}/${project.path}`]]);
    await expectSameAsRegistry(owner, 'projects', projects.rows);
  });

  it('follow a rename of the top-level group down the tree, and a settings change, before the change answers', async () => {
    const owner = await person('lr');
    const member = await person('lm');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: member.id, access_level: 20 })).status).toBe(201);

    const path = `${group.path}-moved`;
    expect((await as(owner).put(`/groups/${group.id}`, { path, name: 'Moved Away', description: 'now elsewhere' })).status).toBe(200);
    expect((await as(owner).put(`/projects/${project.id}`, { description: 'edited', request_access_enabled: false })).status).toBe(200);

    // The member reaches all three through the group.
    const groups = await list(member, '/groups?min_access_level=20');
    expect(groups.rows.map((g) => [g.full_path, g.description])).toEqual([
      [path, 'now elsewhere'],
      [`${path}/${sub.path}`, ''],
    ]);
    await expectSameAsRegistry(member, 'groups', groups.rows);
    const projects = await list(member, '/projects?membership=true');
    expect(projects.rows.map((p) => [p.path_with_namespace, p.description, p.request_access_enabled])).toEqual([[`${path}/${sub.path}/${project.path}`, 'edited', false]]);
    await expectSameAsRegistry(member, 'projects', projects.rows);
  });

  it("follow a user's rename into their personal projects' paths", async () => {
    const owner = await person('lu');
    const project = await createProject(owner);
    const username = `${owner.username}-renamed`;
    expect((await admin.put(`/users/${owner.id}`, { username, name: 'Renamed Person' })).status).toBe(200);

    const projects = await list(owner, '/projects?membership=true');
    expect(projects.rows.map((p) => [p.id, p.path_with_namespace])).toEqual([[project.id, `${username}/${project.path}`]]);
    expect(projects.rows[0].namespace).toMatchObject({ kind: 'user', path: username, full_path: username, name: 'Renamed Person' });
    await expectSameAsRegistry(owner, 'projects', projects.rows);
  });

  it('leave out a deleted project', async () => {
    const owner = await person('ld');
    const group = await createGroup(owner);
    const kept = await createProject(owner, { namespace_id: group.id });
    const gone = await createProject(owner, { namespace_id: group.id });
    expect((await list(owner, '/projects?membership=true')).rows.map((p) => p.id)).toEqual([kept.id, gone.id]);
    expect((await as(owner).delete(`/projects/${gone.id}`)).status).toBe(202);
    expect((await list(owner, '/projects?membership=true')).rows.map((p) => p.id)).toEqual([kept.id]);
  });

  it('leave out the personal projects of a deleted user', async () => {
    const owner = await person('lx');
    const member = await person('ly');
    const project = await createProject(owner);
    expect((await as(owner).post(`/projects/${project.id}/members`, { user_id: member.id, access_level: 30 })).status).toBe(201);
    expect((await list(member, '/projects?membership=true')).rows.map((p) => p.id)).toEqual([project.id]);
    expect((await admin.delete(`/users/${owner.id}`)).status).toBe(204);
    expect((await list(member, '/projects?membership=true')).rows).toEqual([]);
  });

  it('merge trees in different partitions by id, page by page', async () => {
    const owner = await person('lp');
    const member = await person('lq');
    // Top-level groups until three fall in three different partitions.
    const groups: { id: number }[] = [];
    const partitions = new Set<number>();
    while (partitions.size < 3) {
      const g = await createGroup(owner);
      const p = partitionOfId(g.id, partitionCount(env));
      if (partitions.has(p)) continue;
      partitions.add(p);
      groups.push(g);
      expect((await as(owner).post(`/groups/${g.id}/members`, { user_id: member.id, access_level: 30 })).status).toBe(201);
    }
    const ids = groups.map((g) => g.id).sort((a, b) => a - b);

    const pages = await Promise.all([1, 2, 3, 4].map((page) => list(member, `/groups?min_access_level=30&per_page=1&page=${page}`)));
    expect(pages.map((p) => p.rows.map((g) => g.id))).toEqual([[ids[0]], [ids[1]], [ids[2]], []]);
    expect(pages.map((p) => p.total)).toEqual(['3', '3', '3', '3']);
    const second = await list(member, '/groups?min_access_level=30&per_page=2&page=2');
    expect(second.rows.map((g) => g.id)).toEqual([ids[2]]);
    // A higher minimum than the member has lists nothing; the owner's list has them all.
    expect((await list(member, '/groups?min_access_level=40')).rows).toEqual([]);
    expect((await list(owner, '/groups?min_access_level=50&per_page=100')).rows.map((g) => g.id)).toEqual(expect.arrayContaining(ids));
  });

  it("take a registry row left queued by a crash from the Directory's alarm", async () => {
    const owner = await person('la');
    const group = await createGroup(owner);
    // A change committed in the Directory whose push never ran (the object went away first):
    // written straight into its table, which queues the row as every change does; the object's
    // constructor, on its restart, finds the queue and sets the alarm.
    await runInDurableObject(env.DIRECTORY.getByName('directory'), async (_i: Directory, state) => {
      state.storage.sql.exec("UPDATE namespaces SET description = 'set before a crash', version = version + 1 WHERE id = ?", group.id);
      await state.storage.setAlarm(Date.now());
    });
    expect((await list(owner, '/groups?min_access_level=50')).rows.map((g) => g.description)).toEqual(['']);
    await runDurableObjectAlarm(env.DIRECTORY.getByName('directory'));
    const after = await list(owner, '/groups?min_access_level=50');
    expect(after.rows.map((g) => g.description)).toEqual(['set before a crash']);
    await expectSameAsRegistry(owner, 'groups', after.rows);
  });
});
