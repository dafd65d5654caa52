import { allIndexPartitions, userIndexPartitions, type IndexPartitionStub } from '../durable/index-partition/index-partition';
import type { InboxFilter, InboxItem, InboxPage, OwnRequestRow } from '../durable/index-partition/inbox-index';
import type { Caller, Env } from '../env';
import type { Window } from './namespaces';

/**
 * The owners' inbox and the requesters' view, answered by the index partitions (see
 * worker/durable/index-partition/index-partition.ts and inbox-index.ts): no group's or project's object is called.
 * A user's rows are in the partitions of the trees they belong to or asked in, which their `User`
 * object lists; a read asks those and merges. Administrators' inbox (every pending request) asks
 * every partition.
 */

/** What the client's ETag said: a version of the caller's inbox, any (`*`), or nothing. */
export type KnownVersion = number | 'any' | null;

/** Oldest request first, as each partition orders its page. */
const byRequest = (a: InboxItem, b: InboxItem) =>
  a.requested_at.localeCompare(b.requested_at) || a.namespace_id - b.namespace_id || a.user_id - b.user_id;

/**
 * The caller's inbox version and, unless the client already holds that version, a page of it.
 * The version is the sum of the caller's versions in their partitions: each only rises, and the set
 * only grows, so the sum changes exactly when one of them does. An unchanged poll costs the
 * `User` call and one row per partition; otherwise
 * each partition gives its first `offset + limit` rows with the version they were read at.
 */
export const readInbox = async (
  env: Env,
  caller: Caller,
  filter: InboxFilter,
  page: Window,
  known: KnownVersion,
  callerPartitions?: Promise<IndexPartitionStub[]>,
): Promise<{ version: number; page: InboxPage | null }> => {
  const reader = { userId: caller.id, admin: caller.admin };
  const partitions = caller.admin ? allIndexPartitions(env) : await (callerPartitions ?? userIndexPartitions(env, caller.id));
  if (known !== null) {
    const versions = await Promise.all(partitions.map((p) => p.inbox(reader, filter, 0, 0, 'any')));
    const version = versions.reduce((sum, v) => sum + v.version, 0);
    if (known === 'any' || version === known) return { version, page: null };
  }
  const parts = await Promise.all(partitions.map((p) => p.inbox(reader, filter, 0, page.offset + page.limit, null)));
  const version = parts.reduce((sum, v) => sum + v.version, 0);
  const items = parts.flatMap((p) => p.page?.items ?? []).sort(byRequest);
  const total = parts.reduce((sum, p) => sum + (p.page?.total ?? 0), 0);
  return { version, page: { version, total, items: items.slice(page.offset, page.offset + page.limit) } };
};

/** The caller's own requests: pending, and how the others ended in the last 30 days. */
export const ownRequests = async (
  env: Env,
  caller: Caller,
  page: Window,
  callerPartitions?: Promise<IndexPartitionStub[]>,
): Promise<{ total: number; items: OwnRequestRow[] }> => {
  const parts = await Promise.all((await (callerPartitions ?? userIndexPartitions(env, caller.id))).map((p) => p.ownRequests(caller.id, caller.admin)));
  const all = parts.flat().sort((a, b) => a.requested_at.localeCompare(b.requested_at) || a.namespace_id - b.namespace_id);
  return { total: all.length, items: all.slice(page.offset, page.offset + page.limit) };
};
