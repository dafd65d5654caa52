import { beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../worker/durable/migrations';
import { compareBy, inboxCount, INBOX_SORTS, readInbox, takeUpdate, WAITING_CAP, type InboxFilter, type InboxShareRow } from '../../worker/durable/user/inbox';
import { USER_SCHEMA } from '../../worker/durable/user/schema';
import { nodeSqlStorage, type TestStorage } from './support/sql-storage';

/**
 * The console's filter and sort of a manager's inbox, in the one read of their `User` object
 * (worker/durable/user/inbox.ts), and the header's count, which reads at most `WAITING_CAP` rows.
 * The administrators' inbox merges partitions with `compareBy`, which must order as the SQL does.
 */

const TODAY = '2026-03-10';
let user: TestStorage;

const row = (i: number, over: Partial<InboxShareRow> = {}): InboxShareRow => ({
  namespace_id: 100 + (i % 7),
  user_id: 1000 + i,
  requested_at: new Date(Date.UTC(2026, 2, 1) + i * 3_600_000).toISOString(),
  kind: i % 2 ? 'project' : 'group',
  source_name: `Source ${i % 7}`,
  source_full_path: i % 2 ? `acme/site-${i % 7}` : `Beta-${i % 7}`,
  username: `user${(i * 37) % 101}`,
  name: `Person ${i}`,
  grants: [[50, null]],
  details: null,
  ...over,
});

const page = (filter: InboxFilter, limit = 500) => user.transactionSync(() => readInbox(user.sql, filter, 0, limit, null, TODAY)).page!;

beforeEach(() => {
  user = nodeSqlStorage();
  migrate(user, USER_SCHEMA);
  const rows = Array.from({ length: 150 }, (_, i) => row(i));
  user.transactionSync(() => takeUpdate(user.sql, 0, { version: 1, since: null, rows, gone: [] }, TODAY));
});

describe("a manager's inbox, filtered and sorted", () => {
  it('keeps the requests whose source path or requester contains the text, in any case, and those older than a time', () => {
    expect(page({ source: 'ACME/SITE-3' }).items.every((i) => i.source_full_path === 'acme/site-3')).toBe(true);
    expect(page({ source: 'ACME/SITE-3' }).total).toBe(page({}).items.filter((i) => i.source_full_path === 'acme/site-3').length);
    expect(page({ requester: 'person 14' }).items.map((i) => i.name)).toEqual(['Person 14', 'Person 140', 'Person 141', 'Person 142', 'Person 143', 'Person 144', 'Person 145', 'Person 146', 'Person 147', 'Person 148', 'Person 149']);
    expect(page({ requester: 'USER36' }).items.every((i) => i.username.includes('user36'))).toBe(true);
    // LIKE's wildcards are text like any other.
    expect(page({ source: '%' }).total).toBe(0);
    const cut = row(10).requested_at;
    expect(page({ maxRequestedAt: cut }).total).toBe(10);
  });

  it('orders each sort as the administrators’ merge does, every page after the other', () => {
    for (const sort of INBOX_SORTS) {
      const all = page({ sort }).items;
      expect(all.map((i) => i.user_id), sort).toEqual([...all].sort(compareBy(sort)).map((i) => i.user_id));
      const pages = [0, 1, 2].flatMap((n) => user.transactionSync(() => readInbox(user.sql, { sort }, n * 50, 50, null, TODAY)).page!.items);
      expect(pages.map((i) => i.user_id)).toEqual(all.map((i) => i.user_id));
    }
    expect(page({ sort: 'newest' }).items[0]!.name).toBe('Person 149');
    // In any case: acme/… before Beta-….
    expect(page({ sort: 'source' }).items[0]!.source_full_path).toBe('acme/site-0');
  });

  it("counts what waits for the header up to the cap, so every page reads at most that many rows", () => {
    expect(user.transactionSync(() => inboxCount(user.sql, TODAY))).toBe(WAITING_CAP);
    const few = nodeSqlStorage();
    migrate(few, USER_SCHEMA);
    few.transactionSync(() => takeUpdate(few.sql, 0, { version: 1, since: null, rows: [row(1), row(2)], gone: [] }, TODAY));
    expect(few.transactionSync(() => inboxCount(few.sql, TODAY))).toBe(2);
  });
});
