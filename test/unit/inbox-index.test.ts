import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clock } from '../../worker/clock';
import { readInbox } from '../../worker/durable/index-partition/inbox-index';
import { INDEX_PARTITION_SCHEMA } from '../../worker/durable/index-partition/schema';
import { migrate } from '../../worker/durable/migrations';
import { applyMembershipChanges } from '../../worker/durable/namespace-registry';
import { memberChange, pendingRequest } from './support/index-changes';
import { nodeSqlStorage } from './support/sql-storage';

/**
 * The owners' inbox (worker/durable/index-partition/inbox-index.ts) on an index partition's
 * tables: the cases the random model (inbox-model.test.ts) reaches only now and then, one each.
 */

let sql: SqlStorage;
const TODAY = '2026-03-10';
const inbox = (userId: number, known: number | null = null, today = TODAY) => readInbox(sql, { userId, admin: false }, {}, 0, 20, known, today);
const levels = (userId: number) => inbox(userId).page!.items.map((i) => [i.namespace_id, i.access_level]);

describe("a manager's inbox", () => {
  const realNow = clock.now;
  afterEach(() => {
    clock.now = realNow;
  });
  beforeEach(() => {
    clock.now = () => Date.parse(`${TODAY}T12:00:00.000Z`);
    const storage = nodeSqlStorage();
    migrate(storage, INDEX_PARTITION_SCHEMA);
    sql = storage.sql;
    // acme (group 1) ⊃ site (project 2); the requester, user 20.
    sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (1, 'group', 'acme', 'acme', NULL, 'public', 1)");
    sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (2, 'project', 'site', 'acme/site', 1, 'public', 1)");
    sql.exec("INSERT INTO users (id, username, name, state, version) VALUES (20, 'req', 'Req', 'active', 1)");
    applyMembershipChanges(sql, 2, [], [pendingRequest(20, 1)]);
  });

  it('shows their new level with a new version when it changes, and nothing new when a lower one does', () => {
    applyMembershipChanges(sql, 2, [memberChange(10, 40, 2)]);
    const maintainer = inbox(10);
    expect(levels(10)).toEqual([[2, 40]]);
    applyMembershipChanges(sql, 2, [memberChange(10, 50, 3)]);
    const owner = inbox(10, maintainer.version);
    expect(owner.version).toBeGreaterThan(maintainer.version);
    expect(levels(10)).toEqual([[2, 50]]);
    // A Developer's level in the group above changes nothing they see.
    applyMembershipChanges(sql, 1, [memberChange(10, 30, 1)]);
    expect(inbox(10, owner.version).page).toBeNull();
  });

  it('takes a request to a project to the Owners of the group above, and not to its Developers', () => {
    applyMembershipChanges(sql, 1, [memberChange(10, 50, 1), memberChange(11, 30, 2)]);
    expect(levels(10)).toEqual([[2, 50]]);
    expect(levels(11)).toEqual([]);
  });

  it('forgets a request resting on a membership from its expiry date, before any push says so', () => {
    applyMembershipChanges(sql, 1, [memberChange(10, 50, 1, '2026-03-11')]);
    const before = inbox(10, null, TODAY);
    expect(before.page!.items).toHaveLength(1);
    const after = inbox(10, before.version, '2026-03-11');
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.page!.items).toEqual([]);
  });
});
