import { OWNER, type NamespaceKind } from '../../../shared/access-levels';
import { KINDS } from '../../auth/policy';
import type { UserState } from '../user-lifecycle';

/**
 * The owners' inbox: for each user, every pending access request they may act on, across all
 * groups and projects (GitLab's access-request rules: Maintainer+ on a project, Owner on a group,
 * directly or through an ancestor group). Plain functions over the index partition's SQLite, called from
 * the same transactions that apply a namespace object's outbox to the membership and requester
 * indexes (namespace-registry.ts), so the inbox moves with them and never drifts.
 *
 * It is materialised per manager (`inbox`: one row per manager and request), so reading a page
 * costs an index range over the caller's own pending requests, whatever the number of groups and
 * projects they manage. Keeping it costs, per request made or gone, the managers of its source's
 * chain (`request_scopes`: the source and its ancestors); per member change, the pending requests
 * at or below that group or project.
 *
 * `inbox_versions` holds a number per user that rises in the same transaction as anything that
 * changes what their inbox shows (a row in or out, their level there, a source's name or path, a
 * requester's name or state). It is the inbox's ETag. Administrators act everywhere, so their inbox is
 * every pending request, versioned under `EVERY_REQUEST`.
 *
 * A manager's row carries `until`: the earliest expiry date among the memberships it rests on.
 * From that day the row is judged again before the inbox or its version is read (`settleDue`), so
 * an expired membership shows nothing even before its object's alarm has pushed the removal.
 */

/** How long a requester sees how their request ended. */
export const OUTCOME_DAYS = 30;

/** The version row of the administrators' inbox (no user has id 0). */
const EVERY_REQUEST = 0;

/** No level below this manages requests anywhere. */
const LOWEST_MANAGER_LEVEL = Math.min(KINDS.group.managesRequests, KINDS.project.managesRequests);

/**
 * Only active users' requests are shown: a blocked or deactivated user's requests are being
 * removed by the user's fan-out, and are hidden from the moment the state changes.
 */
const SHOWN_REQUESTER_STATE = 'active';

type SourceKind = NamespaceKind | 'user';

/** A manager's standing over one request: their effective level, and when that may next change. */
type Managing = {
  access_level: number;
  until: string | null;
};

const json = (ids: number[]) => JSON.stringify(ids);

/** Raises the inbox version of each user (one transaction with the change that caused it). */
const bump = (sql: SqlStorage, userIds: Iterable<number>): void => {
  for (const id of new Set(userIds)) {
    sql.exec('INSERT INTO inbox_versions (user_id, version) VALUES (?, 1) ON CONFLICT (user_id) DO UPDATE SET version = version + 1', id);
  }
};

/**
 * Memberships in `chain` (a source and its ancestors) that let their holder manage requests of a
 * source of this kind, today. The level is the highest of them; `until`, the earliest expiry.
 */
const MANAGING = `SELECT user_id, MAX(access_level) AS access_level, MIN(expires_at) AS until FROM memberships
  WHERE namespace_id IN (SELECT value FROM json_each(?)) AND access_level >= ? AND (expires_at IS NULL OR expires_at > ?)`;

const managersOf = (sql: SqlStorage, chain: number[], kind: NamespaceKind, today: string): Map<number, Managing> =>
  new Map(
    sql
      .exec<Managing & { user_id: number }>(`${MANAGING} GROUP BY user_id`, json(chain), KINDS[kind].managesRequests, today)
      .toArray()
      .map((r) => [r.user_id, { access_level: r.access_level, until: r.until }]),
  );

const managingOne = (sql: SqlStorage, managerId: number, chain: number[], kind: NamespaceKind, today: string): Managing | null => {
  const r = sql
    .exec<Managing & { user_id: number | null }>(`${MANAGING} AND user_id = ?`, json(chain), KINDS[kind].managesRequests, today, managerId)
    .one();
  return r.user_id === null ? null : { access_level: r.access_level, until: r.until };
};

const putRow = (sql: SqlStorage, managerId: number, namespaceId: number, userId: number, requestedAt: string, kind: NamespaceKind, m: Managing) =>
  sql.exec(
    `INSERT INTO inbox (manager_id, namespace_id, user_id, requested_at, kind, access_level, until) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (manager_id, namespace_id, user_id) DO UPDATE SET
       requested_at = excluded.requested_at, kind = excluded.kind, access_level = excluded.access_level, until = excluded.until`,
    managerId,
    namespaceId,
    userId,
    requestedAt,
    kind,
    m.access_level,
    m.until,
  );

/**
 * A request in the requester index was made (`requestedAt`) or went (null): its managers' rows are
 * replaced. Versions rise for every manager whose row appeared, went or changed.
 */
export const requestChanged = (
  sql: SqlStorage,
  source: { id: number; kind: SourceKind },
  chain: number[],
  requesterId: number,
  requestedAt: string | null,
  today: string,
): void => {
  const before = new Map(
    sql
      .exec<{ manager_id: number; access_level: number; requested_at: string }>(
        'DELETE FROM inbox WHERE namespace_id = ? AND user_id = ? RETURNING manager_id, access_level, requested_at',
        source.id,
        requesterId,
      )
      .toArray()
      .map((r) => [r.manager_id, r]),
  );
  const wasPending = sql.exec('DELETE FROM request_scopes WHERE namespace_id = ? AND user_id = ? RETURNING scope_id', source.id, requesterId).toArray().length > 0;
  const touched: number[] = [];
  const kind = source.kind;
  const isPending = requestedAt !== null && kind !== 'user';
  if (isPending) {
    for (const scope of chain) sql.exec('INSERT INTO request_scopes (scope_id, namespace_id, user_id) VALUES (?, ?, ?)', scope, source.id, requesterId);
    for (const [managerId, m] of managersOf(sql, chain, kind, today)) {
      putRow(sql, managerId, source.id, requesterId, requestedAt, kind, m);
      const was = before.get(managerId);
      before.delete(managerId);
      if (!was || was.access_level !== m.access_level || was.requested_at !== requestedAt) touched.push(managerId);
    }
  }
  touched.push(...before.keys());
  if (wasPending !== isPending) touched.push(EVERY_REQUEST);
  bump(sql, touched);
};

/**
 * Judges one manager's row for one request again, from the indexes as they are now. Returns
 * whether what their inbox shows changed (the row came, went, or its level moved).
 */
const refresh = (sql: SqlStorage, managerId: number, namespaceId: number, requesterId: number, today: string): boolean => {
  const request = sql
    .exec<{ requested_at: string; kind: NamespaceKind }>(
      `SELECT p.requested_at, n.kind FROM pending_requests p JOIN namespaces n ON n.id = p.namespace_id
       WHERE p.namespace_id = ? AND p.user_id = ? AND p.pending = 1`,
      namespaceId,
      requesterId,
    )
    .toArray()[0];
  const chain = sql
    .exec<{ scope_id: number }>('SELECT scope_id FROM request_scopes WHERE namespace_id = ? AND user_id = ?', namespaceId, requesterId)
    .toArray()
    .map((r) => r.scope_id);
  const managing = request && chain.length > 0 ? managingOne(sql, managerId, chain, request.kind, today) : null;
  const before = sql
    .exec<{ access_level: number }>('SELECT access_level FROM inbox WHERE manager_id = ? AND namespace_id = ? AND user_id = ?', managerId, namespaceId, requesterId)
    .toArray()[0];
  if (request && managing) {
    putRow(sql, managerId, namespaceId, requesterId, request.requested_at, request.kind, managing);
    return !before || before.access_level !== managing.access_level;
  }
  if (!before) return false;
  sql.exec('DELETE FROM inbox WHERE manager_id = ? AND namespace_id = ? AND user_id = ?', managerId, namespaceId, requesterId);
  return true;
};

/**
 * A user's membership of a group or project changed (`highestLevel`: the higher of before and
 * after). Only a level that manages requests somewhere can matter; then their rows for every
 * pending request at or below that group or project are judged again.
 */
export const membershipChanged = (sql: SqlStorage, userId: number, namespaceId: number, highestLevel: number, today: string): void => {
  if (highestLevel < LOWEST_MANAGER_LEVEL) return;
  const below = sql.exec<{ namespace_id: number; user_id: number }>('SELECT namespace_id, user_id FROM request_scopes WHERE scope_id = ?', namespaceId).toArray();
  let changed = false;
  for (const r of below) changed = refresh(sql, userId, r.namespace_id, r.user_id, today) || changed;
  if (changed) bump(sql, [userId]);
};

/** Rows resting on a membership whose expiry date has come are judged again (before any read). */
const settleDue = (sql: SqlStorage, managerId: number, today: string): void => {
  const due = sql
    .exec<{ namespace_id: number; user_id: number }>(
      'SELECT namespace_id, user_id FROM inbox WHERE manager_id = ? AND until IS NOT NULL AND until <= ?',
      managerId,
      today,
    )
    .toArray();
  let changed = false;
  for (const r of due) changed = refresh(sql, managerId, r.namespace_id, r.user_id, today) || changed;
  if (changed) bump(sql, [managerId]);
};

/** Groups or projects were renamed (a new name, or a new full path): their requests' managers see it. */
export const sourcesRenamed = (sql: SqlStorage, ids: number[]): void => {
  const managers = sql
    .exec<{ manager_id: number }>('SELECT DISTINCT manager_id FROM inbox WHERE namespace_id IN (SELECT value FROM json_each(?))', json(ids))
    .toArray()
    .map((r) => r.manager_id);
  const anyPending = sql.exec('SELECT 1 FROM request_scopes WHERE namespace_id IN (SELECT value FROM json_each(?)) LIMIT 1', json(ids)).toArray().length > 0;
  bump(sql, anyPending ? [...managers, EVERY_REQUEST] : managers);
};

/** A group or project is being deleted: its requests leave every inbox. */
export const requestsDeletedWith = (sql: SqlStorage, namespaceId: number): void => {
  const managers = sql.exec<{ manager_id: number }>('DELETE FROM inbox WHERE namespace_id = ? RETURNING manager_id', namespaceId).toArray();
  const had = sql.exec('DELETE FROM request_scopes WHERE namespace_id = ? RETURNING scope_id', namespaceId).toArray().length > 0;
  bump(sql, [...managers.map((r) => r.manager_id), ...(had ? [EVERY_REQUEST] : [])]);
};

/**
 * A requester's username, name or state changed, or they are being deleted: the inboxes showing
 * their requests show the new names, or (not active) no longer show them. Called in the
 * transaction that changes the users row.
 */
export const requesterChanged = (sql: SqlStorage, userId: number): void => {
  const managers = sql
    .exec<{ manager_id: number }>(
      `SELECT DISTINCT i.manager_id FROM pending_requests p JOIN inbox i ON i.namespace_id = p.namespace_id AND i.user_id = p.user_id
       WHERE p.user_id = ? AND p.pending = 1`,
      userId,
    )
    .toArray()
    .map((r) => r.manager_id);
  const anyPending = sql.exec('SELECT 1 FROM pending_requests WHERE user_id = ? AND pending = 1 LIMIT 1', userId).toArray().length > 0;
  bump(sql, anyPending ? [...managers, EVERY_REQUEST] : managers);
};

// ---- reading ----

/** Whose inbox: a user's own, or (administrators) every pending request. */
export interface InboxReader {
  userId: number;
  admin: boolean;
}

export interface InboxFilter {
  kind?: NamespaceKind;
  /** ISO 8601, UTC with milliseconds: requests made at or after it. */
  minRequestedAt?: string;
}

/** A pending request in an inbox, with its source and the reader's level there. */
export type InboxItem = {
  namespace_id: number;
  kind: NamespaceKind;
  source_name: string;
  source_full_path: string;
  user_id: number;
  username: string;
  name: string;
  state: UserState;
  requested_at: string;
  /** The reader's effective level on the source (Owner for administrators). */
  access_level: number;
};

export interface InboxPage {
  version: number;
  total: number;
  items: InboxItem[];
}

/** The reader's inbox version (their ETag), after judging rows whose memberships' expiry has come. */
export const inboxVersion = (sql: SqlStorage, reader: InboxReader, today: string): number => {
  if (!reader.admin) settleDue(sql, reader.userId, today);
  const key = reader.admin ? EVERY_REQUEST : reader.userId;
  return sql.exec<{ version: number }>('SELECT version FROM inbox_versions WHERE user_id = ?', key).toArray()[0]?.version ?? 0;
};

/**
 * A page of the reader's inbox, oldest request first, with its version read in the same
 * transaction. A manager's page is a range of their own rows; an administrator's, a range of every
 * pending request (index `pending_requests_open`).
 */
export const inboxPage = (sql: SqlStorage, reader: InboxReader, filter: InboxFilter, offset: number, limit: number, today: string): InboxPage => {
  const version = inboxVersion(sql, reader, today);
  const from = reader.admin
    ? { table: 'pending_requests i', where: ['i.pending = 1', 'i.requested_at IS NOT NULL'], args: [] as unknown[], kind: 'n.kind', level: String(OWNER) }
    : { table: 'inbox i', where: ['i.manager_id = ?'], args: [reader.userId] as unknown[], kind: 'i.kind', level: 'i.access_level' };
  const where = [...from.where, 'u.state = ?'];
  const args = [...from.args, SHOWN_REQUESTER_STATE];
  if (filter.kind) {
    where.push(`${from.kind} = ?`);
    args.push(filter.kind);
  }
  if (filter.minRequestedAt) {
    where.push('i.requested_at >= ?');
    args.push(filter.minRequestedAt);
  }
  const body = `FROM ${from.table} JOIN users u ON u.id = i.user_id JOIN namespaces n ON n.id = i.namespace_id WHERE ${where.join(' AND ')}`;
  const total = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n ${body}`, ...args).one().n;
  const items = sql
    .exec<InboxItem>(
      `SELECT i.namespace_id, ${from.kind} AS kind, n.name AS source_name, n.full_path AS source_full_path, i.user_id, u.username, u.name, u.state,
              i.requested_at, ${from.level} AS access_level
       ${body} ORDER BY i.requested_at, i.namespace_id, i.user_id LIMIT ? OFFSET ?`,
      ...args,
      limit,
      offset,
    )
    .toArray();
  return { version, total, items };
};

/**
 * A page of the reader's inbox with its version; only the version when that is still
 * `knownVersion` (the client's ETag), so an unchanged poll reads one row. Run in a transaction.
 */
export const readInbox = (
  sql: SqlStorage,
  reader: InboxReader,
  filter: InboxFilter,
  offset: number,
  limit: number,
  knownVersion: number | 'any' | null,
  today: string,
): { version: number; page: InboxPage | null } => {
  const version = inboxVersion(sql, reader, today);
  if (version === knownVersion || knownVersion === 'any') return { version, page: null };
  return { version, page: inboxPage(sql, reader, filter, offset, limit, today) };
};

/** One of a requester's own requests: pending, or how it ended. */
export type OwnRequestRow = {
  namespace_id: number;
  kind: NamespaceKind;
  source_name: string;
  source_full_path: string;
  visibility: string;
  requested_at: string;
  pending: number;
  outcome: 'approved' | 'denied' | 'withdrawn' | null;
  access_level: number | null;
  expires_at: string | null;
  decided_at: string | null;
};

/**
 * A requester's pending requests, and those decided since `since` (ISO 8601) or approved with an
 * expiry on or after `sinceDate`, oldest first. Requests removed with a blocked or deleted
 * requester are not theirs to see.
 */
export const requestsOf = (sql: SqlStorage, userId: number, since: string, sinceDate: string): OwnRequestRow[] =>
  sql
    .exec<OwnRequestRow>(
      `SELECT p.namespace_id, n.kind, n.name AS source_name, n.full_path AS source_full_path, n.visibility, p.requested_at, p.pending,
              p.outcome, p.access_level, p.expires_at, p.decided_at
       FROM pending_requests p JOIN namespaces n ON n.id = p.namespace_id
       WHERE p.user_id = ? AND p.requested_at IS NOT NULL
         AND (p.pending = 1 OR (p.outcome IN ('approved', 'denied', 'withdrawn') AND (p.decided_at >= ? OR (p.outcome = 'approved' AND p.expires_at >= ?))))
       ORDER BY p.requested_at, p.namespace_id`,
      userId,
      since,
      sinceDate,
    )
    .toArray();
