import { allIndexPartitions, userIndexPartitions, type IndexPartitionStub } from '../durable/index-partition/index-partition';
import type { OwnRequestRow } from '../durable/index-partition/inbox-index';
import type { AccessAlertRow } from '../durable/index-partition/alerts';
import { compareBy, type InboxFilter, type InboxPage, type KnownVersion } from '../durable/user/inbox';
import { userObject } from '../durable/user/user';
import type { InboxPoll } from '../durable/user/contract';
import type { Caller, Env } from '../env';
import type { Window } from './namespaces';

export type { KnownVersion } from '../durable/user/inbox';
export type { InboxPoll } from '../durable/user/contract';

/**
 * The owners' inbox and the requesters' view: no group's or project's object is called. A
 * manager's inbox is kept in their own `User` object (worker/durable/user/inbox.ts), which the
 * index partitions keep up to date: a page, or an unchanged poll, is one call to it. The
 * administrators' inbox (every pending request) asks every partition and merges. A requester's own
 * requests are in the partitions of the trees they asked in, which their `User` lists.
 */

/**
 * A user's inbox version (their ETag's) and whether the access token of grant `grantId` whose keyed
 * hash is `accessHash` is a live one of theirs, asked before the caller is known: the API uses the version
 * only once a token proved to be that user's (the object's word on its own token, or the token's
 * KV record).
 */
export const pollInbox = (env: Env, userId: number, token: { grantId: string; accessHash: string } | null): Promise<InboxPoll> => userObject(env, userId).pollInbox(token);

/**
 * The caller's inbox version and, unless the client already holds that version, a page of it.
 * `early`: the caller's version asked already (`pollInbox`), so an unchanged poll waits for
 * nothing more.
 */
export const readInbox = async (
  env: Env,
  caller: Caller,
  filter: InboxFilter,
  page: Window,
  known: KnownVersion,
  early?: Promise<number>,
): Promise<{ version: number; page: InboxPage | null }> => {
  if (caller.admin) return everyRequest(env, filter, page, known);
  if (known !== null && early) {
    const version = await early;
    if (known === 'any' || version === known) return { version, page: null };
  }
  return userObject(env, caller.id).inbox(filter, page.offset, page.limit, known);
};

/**
 * Every pending request, for an administrator: each partition's first `offset + limit` with the
 * version it was read at, merged. The version is the sum of the partitions' administrators'
 * versions: each only rises, so the sum changes exactly when one of them does.
 */
const everyRequest = async (env: Env, filter: InboxFilter, page: Window, known: KnownVersion): Promise<{ version: number; page: InboxPage | null }> => {
  const partitions = allIndexPartitions(env);
  if (known !== null) {
    const versions = await Promise.all(partitions.map((p) => p.everyRequest(filter, 0, 'any')));
    const version = versions.reduce((sum, v) => sum + v.version, 0);
    if (known === 'any' || version === known) return { version, page: null };
  }
  const parts = await Promise.all(partitions.map((p) => p.everyRequest(filter, page.offset + page.limit, null)));
  const version = parts.reduce((sum, v) => sum + v.version, 0);
  const items = parts.flatMap((p) => p.page?.items ?? []).sort(compareBy(filter.sort));
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

/**
 * The caller's alerts (break-glass grants where they are an Owner, others' access ending soon
 * where they manage requests), from the partitions of the trees they are a member in, newest first.
 */
export const accessAlerts = async (env: Env, caller: Caller): Promise<AccessAlertRow[]> => {
  const parts = await Promise.all((await userIndexPartitions(env, caller.id)).map((p) => p.accessAlerts(caller.id)));
  return parts.flat().sort((a, b) => b.at.localeCompare(a.at) || a.namespace_id - b.namespace_id || a.user_id - b.user_id);
};
