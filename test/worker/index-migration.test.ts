import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEVELOPER, OWNER } from '../../shared/access-levels';
import type { Directory } from '../../worker/durable/directory/directory';
import type { IndexPartition } from '../../worker/durable/index-partition/index-partition';
import { allIndexPartitions } from '../../worker/durable/index-partition/index-partition';
import { as, createGroup, createProject, person, startWorker } from './support/namespaces';

/**
 * The membership, requester and inbox indexes moved from the Directory to the index partitions.
 * A deployment updated from the version before keeps its memberships and requests: the old index
 * is copied into the partitions once, before anyone reads them. Here the state is written the way
 * the version before wrote it (the Directory's own tables: memberships and pending requests),
 * with nothing in the partitions or in the users' `User` lists, then read through the API.
 */

const directoryStub = () => env.DIRECTORY.getByName('directory');

/** Empties every index partition and every user's list of them: a deployment from before partitions. */
const forgetPartitions = async (userIds: number[]) => {
  const tables = ['namespaces', 'users', 'memberships', 'pending_requests', 'request_scopes', 'inbox', 'inbox_versions', 'inbox_outbox', 'known_users', 'deleted_namespaces'];
  await Promise.all(
    allIndexPartitions(env).map((p) =>
      runInDurableObject(p, (_i: IndexPartition, state) => {
        for (const t of tables) state.storage.sql.exec(`DELETE FROM ${t}`);
      }),
    ),
  );
  for (const id of userIds) {
    await runInDurableObject(env.USERS.getByName(String(id)), (_i, state) => {
      state.storage.sql.exec('DELETE FROM index_partitions');
    });
  }
};

beforeAll(startWorker, 30_000);

describe('moving the indexes out of the Directory', () => {
  it('copies what the old Directory index held, once, and the API then answers from the partitions', async () => {
    const [owner, member, requester] = await Promise.all([person('own'), person('mem'), person('req')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await forgetPartitions([owner.id, member.id, requester.id]);

    // The version before kept these in the Directory: the group's Owner, a Developer of the
    // project, and a pending request for the project.
    const requestedAt = new Date().toISOString();
    await runInDurableObject(directoryStub(), (_i: Directory, state) => {
      const sql = state.storage.sql;
      sql.exec("DELETE FROM settings WHERE name IN ('indexes_moved', 'indexes_cursor')");
      // The update's migration queues every registry row once for the partitions' copies.
      sql.exec('DELETE FROM registry_outbox');
      sql.exec('INSERT INTO registry_outbox (namespace_id) SELECT id FROM namespaces WHERE id IN (?, ?)', group.id, project.id);
      const membership = 'INSERT OR REPLACE INTO memberships (user_id, namespace_id, access_level, created_at, created_by, version) VALUES (?, ?, ?, ?, ?, ?)';
      sql.exec(membership, owner.id, group.id, OWNER, requestedAt, null, 1);
      sql.exec(membership, owner.id, project.id, OWNER, requestedAt, null, 1);
      sql.exec(membership, member.id, project.id, DEVELOPER, requestedAt, owner.id, 2);
      sql.exec('INSERT OR REPLACE INTO pending_requests (user_id, namespace_id, pending, version, requested_at) VALUES (?, ?, 1, 3, ?)', requester.id, project.id, requestedAt);
    });
    // The namespace objects hold the same (they are the authority); only the index is missing.
    await runInDurableObject(env.NAMESPACES.getByName(String(project.id)), (_i, state) => {
      const sql = state.storage.sql;
      sql.exec('INSERT INTO members (user_id, access_level, created_at, created_by) VALUES (?, ?, ?, ?)', member.id, DEVELOPER, requestedAt, owner.id);
      sql.exec('INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?)', requester.id, requestedAt, requester.username, requester.username);
      sql.exec('DELETE FROM outbox');
    });

    await directoryStub().moveIndexes();
    // Twice is once: the copy is forward-only by version.
    await runInDurableObject(directoryStub(), (_i: Directory, state) => {
      state.storage.sql.exec("DELETE FROM settings WHERE name IN ('indexes_moved', 'indexes_cursor')");
    });
    await directoryStub().moveIndexes();

    // The group's Owner sees the request in their inbox (by inheritance from the group).
    const inbox = (await (await as(owner).get('/access_requests')).json()) as { id: number; source_id: number; max_access_level: number }[];
    expect(inbox.map((r) => [r.source_id, r.id, r.max_access_level])).toEqual([[project.id, requester.id, OWNER]]);
    // The requester sees their own request.
    const own = (await (await as(requester).get('/user/access_requests')).json()) as { source_id: number; status: string }[];
    expect(own.map((r) => [r.source_id, r.status])).toEqual([[project.id, 'pending']]);
    // The Developer finds the project among theirs, and members/all has both.
    const mine = (await (await as(member).get('/projects?min_access_level=30')).json()) as { id: number }[];
    expect(mine.map((p) => p.id)).toEqual([project.id]);
    // With every field the registry lists (a search, answered by the registry itself).
    const registry = (await (await as(member).get(`/projects?search=${project.path}`)).json()) as { id: number }[];
    expect(mine).toEqual(registry.filter((p) => p.id === project.id));
    const all = (await (await as(owner).get(`/projects/${project.id}/members/all`)).json()) as { id: number; access_level: number }[];
    expect(all.map((m) => [m.id, m.access_level]).sort()).toEqual([[member.id, DEVELOPER], [owner.id, OWNER]].sort());

    // A decision made after the move reaches the copied rows.
    expect((await as(owner).put(`/projects/${project.id}/access_requests/${requester.id}/approve`)).status).toBe(201);
    expect(await (await as(owner).get('/access_requests')).json()).toEqual([]);
    const decided = (await (await as(requester).get('/user/access_requests')).json()) as { source_id: number; status: string }[];
    expect(decided.map((r) => [r.source_id, r.status])).toEqual([[project.id, 'approved']]);
  });
});
