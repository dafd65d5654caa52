import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clock, todayUtc } from '../../worker/clock';
import { inboxDeliveries, inboxDelivered, inboxResync, type InboxDelivery } from '../../worker/durable/index-partition/inbox-index';
import { INDEX_PARTITION_SCHEMA } from '../../worker/durable/index-partition/schema';
import { migrate } from '../../worker/durable/migrations';
import { applyMembershipChanges, type MembershipChange, type RequestChange } from '../../worker/durable/namespace-registry';
import { readInbox, takeUpdate, type InboxAnswer } from '../../worker/durable/user/inbox';
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

/** Every update the partition sent, oldest first. */
let sent: InboxDelivery[];

/** One update taken by its manager's `User`, as `takeInbox` does. */
const take = ({ managerId, update }: InboxDelivery): InboxAnswer => {
  const user = userDatabase(managerId);
  return user.transactionSync(() => takeUpdate(user.sql, PARTITION, update, todayUtc()));
};

/**
 * The partition's inbox outbox drained, as its object sends it (`deliverInbox`): each queued
 * manager's update taken by their `User`, then dequeued, or queued whole when the `User` asks.
 */
const deliver = () => {
  for (;;) {
    const updates = partition.transactionSync(() => inboxDeliveries(partition.sql, 100));
    if (updates.length === 0) return;
    for (const delivery of updates) {
      sent.push(delivery);
      const answer = take(delivery);
      partition.transactionSync(() => (answer === 'resync' ? inboxResync(partition.sql, delivery.managerId) : inboxDelivered(partition.sql, delivery.managerId, delivery.update.version)));
    }
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

/** A partition on a fresh database at noon of TODAY, holding acme (group 1) ⊃ site (project 2); nothing sent yet. */
const freshPartition = () => {
  clock.now = () => Date.parse(`${TODAY}T12:00:00.000Z`);
  partition = nodeSqlStorage();
  users = new Map();
  sent = [];
  migrate(partition, INDEX_PARTITION_SCHEMA);
  partition.sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (1, 'group', 'acme', 'acme', NULL, 'public', 1)");
  partition.sql.exec("INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (2, 'project', 'site', 'acme/site', 1, 'public', 1)");
  return partition;
};

describe("a manager's inbox", () => {
  const realNow = clock.now;
  afterEach(() => {
    clock.now = realNow;
  });
  beforeEach(() => {
    const { sql } = freshPartition();
    // The requester, user 20.
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

describe("a manager's inbox, sent as the rows that changed", () => {
  const realNow = clock.now;
  afterEach(() => {
    clock.now = realNow;
  });
  /** Requesters 100 to 100 + PENDING - 1, each waiting for project 2; user 10 Owner of group 1 above it. */
  const PENDING = 300;
  beforeEach(() => {
    const { sql } = freshPartition();
    for (let id = 100; id < 100 + PENDING; id++) sql.exec("INSERT INTO users (id, username, name, state, version) VALUES (?, ?, 'R', 'active', 1)", id, `r${id}`);
    push(1, [memberChange(10, 50, 1)]);
    push(
      2,
      [],
      Array.from({ length: PENDING }, (_, i) => pendingRequest(100 + i, i + 1)),
    );
  });

  const denied = (userId: number, version: number): RequestChange => ({ ...pendingRequest(userId, version), pending: false, outcome: 'denied', decidedBy: 10, decidedAt: `${TODAY}T12:00:00.000Z` });
  const total = (userId: number) => inbox(userId).page!.total;

  it('sends a decision to the manager as the one request that went, whatever else they have pending there', () => {
    const before = inbox(10);
    sent = [];
    push(2, [], [denied(150, PENDING + 1)]);
    expect(sent.map((d) => [d.managerId, d.update.rows.length, d.update.gone])).toEqual([[10, 0, [[2, 150]]]]);
    const after = inbox(10, before.version);
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.page!.total).toBe(PENDING - 1);
  });

  it('sends a new Maintainer of the project every request they may now act on, and nothing to the Owner', () => {
    sent = [];
    push(2, [memberChange(11, 40, PENDING + 1)]);
    expect(sent.map((d) => [d.managerId, d.update.rows.length])).toEqual([[11, PENDING]]);
    expect(total(11)).toBe(PENDING);
  });

  it('ignores an update that comes again or late, and takes one whose answer was lost', () => {
    push(2, [], [denied(100, PENDING + 1)]);
    push(2, [], [denied(101, PENDING + 2)]);
    const [older, newer] = sent.slice(-2);
    const shown = inbox(10);
    expect([take(newer), take(older)]).toEqual(['held', 'held']);
    expect(inbox(10, shown.version).page).toBeNull();
    // The `User` took a delta but its answer never came back: the next starts where the partition last heard.
    partition.transactionSync(() => partition.sql.exec('INSERT INTO inbox_changes (manager_id, namespace_id, user_id, version) VALUES (10, 2, 102, 0)'));
    const lost = partition.transactionSync(() => partition.sql.exec<{ sent: number }>('SELECT sent FROM inbox_versions WHERE user_id = 10').one().sent);
    partition.transactionSync(() => partition.sql.exec('UPDATE inbox_versions SET sent = ? WHERE user_id = 10', lost - 1));
    sent = [];
    push(2, [], [denied(103, PENDING + 3)]);
    expect(sent.map((d) => [d.update.since, d.update.gone.length])).toEqual([[lost - 1, 1]]);
    expect(total(10)).toBe(PENDING - 3);
  });

  it('sends the whole share to a `User` that does not hold the version a delta starts from', () => {
    // The manager's `User` lost track of this partition (its share and the version it held).
    const user = userDatabase(10);
    user.transactionSync(() => {
      user.sql.exec('DELETE FROM inbox');
      user.sql.exec('DELETE FROM inbox_shares');
    });
    sent = [];
    push(2, [], [denied(100, PENDING + 1)]);
    expect(sent.map((d) => [d.update.since === null, d.update.rows.length])).toEqual([
      [false, 0],
      [true, PENDING - 1],
    ]);
    expect(total(10)).toBe(PENDING - 1);
    // Then deltas again.
    sent = [];
    push(2, [], [denied(101, PENDING + 2)]);
    expect(sent.map((d) => [d.update.since === null, d.update.gone.length])).toEqual([[false, 1]]);
    expect(total(10)).toBe(PENDING - 2);
  });
});
