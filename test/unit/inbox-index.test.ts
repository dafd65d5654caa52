import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clock, todayUtc } from '../../worker/clock';
import { inboxDeliveries, inboxDelivered } from '../../worker/durable/index-partition/inbox-index';
import { INDEX_PARTITION_SCHEMA } from '../../worker/durable/index-partition/schema';
import { migrate } from '../../worker/durable/migrations';
import { applyMembershipChanges, type MembershipChange, type RequestChange } from '../../worker/durable/namespace-registry';
import { readInbox, takeSnapshot } from '../../worker/durable/user/inbox';
import { USER_SCHEMA } from '../../worker/durable/user/schema';
import { memberChange, pendingRequest } from './support/index-changes';
import { nodeSqlStorage, type TestStorage } from './support/sql-storage';

/**
 * The owners' inbox end to end on the objects' SQL: an index partition's tables judge who manages
 * which request (worker/durable/index-partition/inbox-index.ts), its inbox outbox is drained into
 * one `User` database per manager, and the manager's inbox is read there
 * (worker/durable/user/inbox.ts). The cases the random model (inbox-model.test.ts) reaches only
 * now and then, one each.
 */

const TODAY = '2026-03-10';
const PARTITION = 0;
let partition: TestStorage;
let users: Map<number, TestStorage>;

/** A manager's `User` database, made on first use. */
const userDatabase = (managerId: number): TestStorage => {
  let storage = users.get(managerId);
  if (!storage) {
    storage = nodeSqlStorage();
    migrate(storage, USER_SCHEMA);
    users.set(managerId, storage);
  }
  return storage;
};

/** The partition's inbox outbox drained, as its object sends it (`deliverInbox`): each queued manager's share taken by their `User`, then dequeued. */
const deliver = () => {
  for (const share of partition.transactionSync(() => inboxDeliveries(partition.sql, 100))) {
    const user = userDatabase(share.managerId);
    user.transactionSync(() => takeSnapshot(user.sql, PARTITION, share.version, share.rows, todayUtc()));
    partition.transactionSync(() => inboxDelivered(partition.sql, share.managerId, share.version));
  }
};

/** What a group's or project's object pushes, applied by the partition, and the shares it queued delivered. */
const push = (namespaceId: number, members: MembershipChange[], requests: RequestChange[] = []) => {
  partition.transactionSync(() => applyMembershipChanges(partition.sql, namespaceId, members, requests));
  deliver();
};

const inbox = (userId: number, known: number | null = null, today = TODAY) => {
  const user = userDatabase(userId);
  return user.transactionSync(() => readInbox(user.sql, {}, 0, 20, known, today));
};
const levels = (userId: number) => inbox(userId).page!.items.map((i) => [i.namespace_id, i.access_level]);

describe("a manager's inbox", () => {
  const realNow = clock.now;
  afterEach(() => {
    clock.now = realNow;
  });
  beforeEach(() => {
    clock.now = () => Date.parse(`${TODAY}T12:00:00.000Z`);
    partition = nodeSqlStorage();
    users = new Map();
    migrate(partition, INDEX_PARTITION_SCHEMA);
    const { sql } = partition;
    // acme (group 1) ⊃ site (project 2); the requester, user 20.
    sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (1, 'group', 'acme', 'acme', NULL, 'public', 1)");
    sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (2, 'project', 'site', 'acme/site', 1, 'public', 1)");
    sql.exec("INSERT INTO users (id, username, name, state, version) VALUES (20, 'req', 'Req', 'active', 1)");
    push(2, [], [pendingRequest(20, 1)]);
  });

  it('shows their new level with a new version when it changes, and nothing new when a lower one does', () => {
    push(2, [memberChange(10, 40, 2)]);
    const maintainer = inbox(10);
    expect(levels(10)).toEqual([[2, 40]]);
    push(2, [memberChange(10, 50, 3)]);
    const owner = inbox(10, maintainer.version);
    expect(owner.version).toBeGreaterThan(maintainer.version);
    expect(levels(10)).toEqual([[2, 50]]);
    // A Developer's level in the group above changes nothing they see.
    push(1, [memberChange(10, 30, 1)]);
    expect(inbox(10, owner.version).page).toBeNull();
  });

  it('takes a request to a project to the Owners of the group above, and not to its Developers', () => {
    push(1, [memberChange(10, 50, 1), memberChange(11, 30, 2)]);
    expect(levels(10)).toEqual([[2, 50]]);
    expect(levels(11)).toEqual([]);
  });

  it('forgets a request resting on a membership from its expiry date, before any push says so', () => {
    push(1, [memberChange(10, 50, 1, '2026-03-11')]);
    const before = inbox(10, null, TODAY);
    expect(before.page!.items).toHaveLength(1);
    const after = inbox(10, before.version, '2026-03-11');
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.page!.items).toEqual([]);
  });
});
