import { describe, expect, it } from 'vitest';
import { migrate } from '../../worker/durable/migrations';
import { NAMESPACE_SCHEMA } from '../../worker/durable/namespace/schema';
import { nodeSqlStorage } from './support/sql-storage';

// A group's or project's object answers a page of access requests it read before while
// `meta.page_version` is unchanged (worker/durable/namespace/core.ts, `requestPage`), so every
// write that can change what a page shows must change it: the schema's triggers do, whichever
// code path writes.
describe("a group's or project's page_version", () => {
  const storage = nodeSqlStorage();
  migrate(storage, NAMESPACE_SCHEMA);
  const { sql } = storage;
  sql.exec("INSERT INTO meta (singleton, namespace_id, kind) VALUES (1, 7, 'project')");
  const version = () => sql.exec<{ v: number }>('SELECT page_version AS v FROM meta').one().v;
  const changes = (write: () => void): boolean => {
    const before = version();
    storage.transactionSync(write);
    return version() > before;
  };
  const request = (userId: number) =>
    sql.exec("INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, '2026-11-27T00:00:00.000Z', ?, ?)", userId, `u${userId}`, `U ${userId}`);

  it('changes with a new request, a rename, an approval, a closing, a removal and a removed approval', () => {
    expect(changes(() => request(1))).toBe(true);
    expect(changes(() => request(2))).toBe(true);
    expect(changes(() => sql.exec("UPDATE access_requests SET username = 'renamed', name = 'Renamed' WHERE user_id = 1"))).toBe(true);
    expect(changes(() => sql.exec("INSERT INTO approvals (user_id, approver_id, approved_at) VALUES (1, 9, '2026-11-27T00:00:00.000Z')"))).toBe(true);
    expect(changes(() => sql.exec('DELETE FROM approvals WHERE user_id = 1 AND approver_id = 9'))).toBe(true);
    expect(changes(() => sql.exec("UPDATE access_requests SET outcome = 'denied' WHERE user_id = 2"))).toBe(true);
    expect(changes(() => sql.exec('DELETE FROM access_requests WHERE user_id = 2'))).toBe(true);
  });
});
