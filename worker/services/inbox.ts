import { directory } from '../durable/directory';
import type { InboxFilter, InboxPage, OwnRequestRow } from '../durable/inbox-index';
import type { Caller, Env } from '../env';
import type { Window } from './namespaces';

/**
 * The owners' inbox and the requesters' view, both answered by the Directory's indexes alone
 * (see worker/durable/inbox-index.ts): no group's or project's object is called.
 */

/** What the client's ETag said: a version of the caller's inbox, any (`*`), or nothing. */
export type KnownVersion = number | 'any' | null;

/**
 * The caller's inbox version and, unless the client already holds that version, a page of it.
 * One Directory call either way.
 */
export const readInbox = async (
  env: Env,
  caller: Caller,
  filter: InboxFilter,
  page: Window,
  known: KnownVersion,
): Promise<{ version: number; page: InboxPage | null }> =>
  directory(env).inbox({ userId: caller.id, admin: caller.admin }, filter, page.offset, page.limit, known);

/** The caller's own requests: pending, and how the others ended in the last 30 days. */
export const ownRequests = async (env: Env, caller: Caller, page: Window): Promise<{ total: number; items: OwnRequestRow[] }> =>
  directory(env).ownRequests(caller.id, caller.admin, page.offset, page.limit);
