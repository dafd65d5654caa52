import { beforeEach, describe, expect, it } from 'vitest';
import { DIRECTORY_SCHEMA } from '../../worker/durable/directory/schema';
import { INDEX_PARTITION_SCHEMA } from '../../worker/durable/index-partition/schema';
import { migrate } from '../../worker/durable/migrations';
import {
  applyMembershipChanges,
  createNamespace,
  deleteNamespace,
  ensureUserNamespace,
  listNamespaces,
  MAX_DEPTH,
  registryCopies,
  renameUserNamespace,
  resolveNamespace,
  updateNamespace,
  visibleOwnRequests,
  type NewNamespace,
} from '../../worker/durable/namespace-registry';
import type { Result } from '../../worker/durable/result';
import { memberChange, pendingRequest } from './support/index-changes';
import { nodeSqlStorage } from './support/sql-storage';

/**
 * The registry's SQL (worker/durable/namespace-registry.ts) on a Directory's tables, and its
 * membership and requester indexes on an index partition's, in Node: GitLab's rules for paths,
 * nesting, visibility and renames, and what the lists and a requester's own view read. The worker
 * project proves the same through the API; here each rule is one call.
 */

let sql: SqlStorage;
const directory = () => {
  const storage = nodeSqlStorage();
  migrate(storage, DIRECTORY_SCHEMA);
  return storage.sql;
};

const value = <T>(r: Result<T>): T => {
  if (!r.ok) throw new Error(JSON.stringify(r.problem));
  return r.value;
};
const problem = <T>(r: Result<T>) => (r.ok ? null : r.problem);

const create = (kind: 'group' | 'project', path: string, parentId: number | null = null, extra: Partial<NewNamespace> = {}) =>
  createNamespace(sql, { kind, name: path.toUpperCase(), path, parentId, visibility: 'public', requestAccessEnabled: true, description: '', creatorId: 1, ...extra }, 64);

describe('the path registry', () => {
  beforeEach(() => {
    sql = directory();
    sql.exec("INSERT INTO users (username, name, created_at) VALUES ('alice', 'Alice', '2026-01-01T00:00:00.000Z')");
  });

  it('names a group or project by its full path and full name under its parent', () => {
    const top = value(create('group', 'acme'));
    const sub = value(create('group', 'web', top.id));
    const app = value(create('project', 'site', sub.id));
    expect([app.full_path, app.full_name]).toEqual(['acme/web/site', 'ACME / WEB / SITE']);
    expect(app.parent).toMatchObject({ id: sub.id, full_path: 'acme/web', kind: 'group' });
    expect(resolveNamespace(sql, 'project', 'ACME/Web/SITE')?.ancestorIds).toEqual([sub.id, top.id]);
    expect(resolveNamespace(sql, 'group', app.id)).toBeNull();
  });

  it('refuses a taken path in any case, a reserved top-level name and a username', () => {
    value(create('group', 'acme'));
    expect(problem(create('group', 'ACME'))).toEqual({ status: 400, body: { message: { path: ['has already been taken'] } } });
    expect(problem(create('group', 'api'))).toEqual({ status: 400, body: { message: { path: ['api is a reserved name'] } } });
    expect(problem(create('group', 'alice'))).toEqual({ status: 400, body: { message: { path: ['has already been taken'] } } });
  });

  it('puts a group only in a group, a project also in a personal namespace, and nests at most 20 deep', () => {
    const personal = value(ensureUserNamespace(sql, { username: 'alice', name: 'Alice' }));
    expect(value(create('project', 'notes', personal.id)).full_path).toBe('alice/notes');
    expect(problem(create('group', 'team', personal.id))).toEqual({ status: 404, body: { message: '404 Parent Group Not Found' } });
    let parent = value(create('group', 'g1')).id;
    for (let depth = 2; depth <= MAX_DEPTH; depth++) parent = value(create('group', `g${depth}`, parent)).id;
    expect(problem(create('group', 'deeper', parent))).toEqual({ status: 400, body: { message: { parent_id: ['has too deep a level of nesting'] } } });
  });

  it('moves the full path and full name of everything below a renamed group, keeping ids, and says which rows changed', () => {
    const top = value(create('group', 'acme'));
    const sub = value(create('group', 'web', top.id));
    const app = value(create('project', 'site', sub.id));
    const renamed = value(updateNamespace(sql, 'group', top.id, { path: 'globex', name: 'Globex' }));
    expect(renamed.changed.map((c) => c.id).sort()).toEqual([top.id, sub.id, app.id].sort());
    expect(renamed.changed.find((c) => c.id === app.id)?.snapshot).toMatchObject({ full_path: 'globex/web/site', version: 2 });
    expect(resolveNamespace(sql, 'project', app.id)?.namespace).toMatchObject({ full_path: 'globex/web/site', full_name: 'Globex / WEB / SITE' });
    // The old path is free at once.
    expect(value(create('group', 'acme')).full_path).toBe('acme');
    expect(registryCopies(sql, [app.id, sub.id]).map((r) => [r.id, r.root_id])).toEqual([
      [sub.id, top.id],
      [app.id, top.id],
    ]);
  });

  it('keeps a group or project no more visible than its parent, and no less than its children', () => {
    const top = value(create('group', 'acme', null, { visibility: 'internal' }));
    const app = value(create('project', 'site', top.id, { visibility: 'internal' }));
    expect(problem(updateNamespace(sql, 'project', app.id, { visibility: 'public' }))).toEqual({
      status: 400,
      body: { message: { visibility_level: ['public is not allowed since the namespace has internal visibility'] } },
    });
    expect(problem(updateNamespace(sql, 'group', top.id, { visibility: 'private' }))).toEqual({
      status: 400,
      body: { message: { visibility_level: ['private is not allowed since this group contains projects with higher visibility.'] } },
    });
    expect(value(updateNamespace(sql, 'project', app.id, { visibility: 'private' })).row.visibility).toBe('private');
  });

  it("moves a user's personal projects with their username", () => {
    const personal = value(ensureUserNamespace(sql, { username: 'alice', name: 'Alice' }));
    const notes = value(create('project', 'notes', personal.id));
    expect(renameUserNamespace(sql, 'alice', 'alicia', 'Alicia')).toEqual([notes.id]);
    expect(resolveNamespace(sql, 'project', 'alicia/notes')?.namespace.id).toBe(notes.id);
    expect(resolveNamespace(sql, 'project', 'alice/notes')).toBeNull();
  });

  it('deletes only what has nothing below, and frees its path', () => {
    const top = value(create('group', 'acme'));
    const app = value(create('project', 'site', top.id));
    expect(problem(deleteNamespace(sql, 'group', top.id))?.status).toBe(400);
    value(deleteNamespace(sql, 'project', app.id));
    value(deleteNamespace(sql, 'group', top.id));
    expect(value(create('group', 'acme')).full_path).toBe('acme');
  });
});

describe('the lists and a requester’s own view, from an index partition', () => {
  /** A partition's copy of a tree: acme (group) ⊃ web (private group) ⊃ site (project), and 100%_off (group). */
  const tree = () => {
    const storage = nodeSqlStorage();
    migrate(storage, INDEX_PARTITION_SCHEMA);
    sql = storage.sql;
    const row = (id: number, kind: string, path: string, parent: number | null, fullPath: string, visibility = 'public') =>
      sql.exec(
        "INSERT INTO namespaces (id, kind, name, path, full_path, parent_id, visibility, created_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, '2026-01-01T00:00:00.000Z', 1)",
        id,
        kind,
        path,
        path,
        fullPath,
        parent,
        visibility,
      );
    row(1, 'group', 'acme', null, 'acme');
    row(2, 'group', 'web', 1, 'acme/web', 'private');
    row(3, 'project', 'site', 2, 'acme/web/site', 'private');
    row(4, 'group', '100%_off', null, '100%_off');
  };

  it('reaches everything below a membership at the inherited level, and only what the filter asks', () => {
    tree();
    applyMembershipChanges(sql, 1, [memberChange(10, 30, 1)]);
    applyMembershipChanges(sql, 3, [memberChange(10, 40, 1)]);
    const levels: [number, number][] = [
      [1, 30],
      [3, 40],
    ];
    const list = (kind: 'group' | 'project', filter: object) =>
      listNamespaces(sql, kind, { userId: 10, admin: false, ...filter }, levels, 0, 20).namespaces.map((n) => [n.full_path, n.access_level]);
    expect(list('group', {})).toEqual([
      ['acme', 30],
      ['acme/web', 30],
      ['100%_off', null],
    ]);
    expect(list('project', { minAccessLevel: 40 })).toEqual([['acme/web/site', 40]]);
    expect(list('group', { minAccessLevel: 40 })).toEqual([]);
    expect(list('group', { membership: true })).toEqual([
      ['acme', 30],
      ['acme/web', 30],
    ]);
    // A search's % and _ are the characters, not wildcards.
    expect(list('group', { search: '%_' })).toEqual([['100%_off', null]]);
    // Private ones only for those who reach them; administrators see every one.
    expect(listNamespaces(sql, 'group', { userId: 11, admin: false }, [], 0, 20).namespaces.map((n) => n.full_path)).toEqual(['acme', '100%_off']);
    expect(listNamespaces(sql, 'group', { userId: 11, admin: true }, [], 0, 20).total).toBe(3);
  });

  it('shows a requester their request to a private project only while they can see it', () => {
    tree();
    applyMembershipChanges(sql, 3, [], [pendingRequest(20, 1)]);
    applyMembershipChanges(sql, 1, [], [pendingRequest(20, 1)]);
    const own = () => visibleOwnRequests(sql, 20, false, Date.parse('2026-01-03T00:00:00.000Z')).map((r) => r.source_full_path);
    expect(own()).toEqual(['acme']);
    applyMembershipChanges(sql, 2, [memberChange(20, 10, 1)]);
    expect(own()).toEqual(['acme', 'acme/web/site']);
    expect(visibleOwnRequests(sql, 20, true, Date.parse('2026-01-03T00:00:00.000Z'))).toHaveLength(2);
  });

  it('applies each change once and never an older one over a newer', () => {
    tree();
    const held = () => sql.exec('SELECT access_level, version FROM memberships WHERE user_id = 10').toArray();
    applyMembershipChanges(sql, 1, [memberChange(10, 50, 2)]);
    applyMembershipChanges(sql, 1, [memberChange(10, 30, 1)]);
    expect(held()).toEqual([{ access_level: 50, version: 2 }]);
    applyMembershipChanges(sql, 1, [memberChange(10, 40, 2)]);
    expect(held()).toEqual([{ access_level: 50, version: 2 }]);
  });
});
