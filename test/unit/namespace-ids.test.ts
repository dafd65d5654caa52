import { beforeEach, describe, expect, it } from 'vitest';
import { DIRECTORY_SCHEMA } from '../../worker/durable/directory/schema';
import { migrate } from '../../worker/durable/migrations';
import { createNamespace, deleteNamespace, ensureUserNamespace, type NewNamespace } from '../../worker/durable/namespace-registry';
import { idInTreeOf, partitionOfId } from '../../worker/durable/partitions';
import type { Result } from '../../worker/durable/result';
import { nodeSqlStorage } from './support/sql-storage';

/**
 * A group's or project's id carries its tree's partition (worker/durable/partitions.ts
 * `idInTreeOf`), so the index partition of an id is the one holding its row: the rule itself, and
 * the registry giving every row below a top-level one such an id (namespace-registry.ts
 * `createNamespace`) while top-level rows take the next id.
 */

describe('the id of a row below a top-level one', () => {
  it('is the smallest id above every id used that falls in the partition of its root', () => {
    for (const count of [1, 2, 3, 7, 64, 1024]) {
      for (const rootId of [1, 2, count - 1, count, count + 1, 5 * count + 3]) {
        if (rootId < 1) continue;
        for (const last of [0, 1, rootId, rootId + 1, 3 * count - 1, 3 * count, 10_000]) {
          const id = idInTreeOf(rootId, last, count);
          expect(partitionOfId(id, count), `count ${count}, root ${rootId}, last ${last}`).toBe(partitionOfId(rootId, count));
          expect(id).toBeGreaterThan(last);
          expect(Number.isSafeInteger(id)).toBe(true);
          // None between: no id is skipped that would have done.
          for (let smaller = last + 1; smaller < id; smaller++) expect(partitionOfId(smaller, count)).not.toBe(partitionOfId(rootId, count));
        }
      }
    }
  });

  it('is the next id when that one already falls in the partition, and any next id with one partition', () => {
    expect(idInTreeOf(3, 66, 64)).toBe(67);
    expect(idInTreeOf(3, 67, 64)).toBe(131);
    expect(idInTreeOf(64, 0, 64)).toBe(64);
    expect(idInTreeOf(9, 41, 1)).toBe(42);
  });
});

describe('ids the registry gives', () => {
  const PARTITIONS = 8;
  let sql: SqlStorage;
  const value = <T>(r: Result<T>): T => {
    if (!r.ok) throw new Error(JSON.stringify(r.problem));
    return r.value;
  };
  const create = (kind: 'group' | 'project', path: string, parentId: number | null) => {
    const input: NewNamespace = { kind, name: path, path, parentId, visibility: 'public', requestAccessEnabled: true, description: '', creatorId: 1 };
    return value(createNamespace(sql, input, PARTITIONS));
  };
  const partition = (id: number) => partitionOfId(id, PARTITIONS);

  beforeEach(() => {
    const storage = nodeSqlStorage();
    migrate(storage, DIRECTORY_SCHEMA);
    sql = storage.sql;
    sql.exec("INSERT INTO users (username, name, created_at) VALUES ('alice', 'Alice', '2026-01-01T00:00:00.000Z')");
  });

  it("puts every row of a tree in its root's partition, and each top-level row at the next id", () => {
    const acme = create('group', 'acme', null);
    const other = create('group', 'other', null);
    expect(other.id).toBe(acme.id + 1);
    const web = create('group', 'web', acme.id);
    const deep = create('group', 'deep', web.id);
    const site = create('project', 'site', deep.id);
    const tool = create('project', 'tool', other.id);
    const personal = value(ensureUserNamespace(sql, { username: 'alice', name: 'Alice' }));
    const notes = create('project', 'notes', personal.id);
    for (const row of [web, deep, site]) expect(partition(row.id), row.full_path).toBe(partition(acme.id));
    expect(partition(tool.id)).toBe(partition(other.id));
    expect(partition(notes.id)).toBe(partition(personal.id));
    // Each above every id before it; a top-level row takes the next one after the highest.
    const ids = [acme, other, web, deep, site, tool, personal, notes].map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(personal.id).toBe(tool.id + 1);
    expect(create('group', 'next', null).id).toBe(notes.id + 1);
  });

  it('never gives a deleted id again, to a row below a top-level one or a top-level one', () => {
    const acme = create('group', 'acme', null);
    const first = create('project', 'first', acme.id);
    value(deleteNamespace(sql, 'project', first.id));
    const second = create('project', 'second', acme.id);
    expect(second.id).toBe(first.id + PARTITIONS);
    value(deleteNamespace(sql, 'project', second.id));
    expect(create('group', 'later', null).id).toBe(second.id + 1);
  });
});
