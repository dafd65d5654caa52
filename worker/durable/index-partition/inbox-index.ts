import { OWNER, type NamespaceKind } from '../../../shared/access-levels';
import { KINDS } from '../../auth/policy';
import {
  filterConditions,
  grantsOf,
  orderBy,
  type Grant,
  type InboxFilter,
  type InboxItem,
  type InboxPage,
  type InboxShareRow,
  type InboxUpdate,
  type KnownVersion,
  type RequestKey,
} from '../user/inbox';

/**
 * The owners' inbox as the index partition judges it: for each manager, every pending access
 * request of this partition's trees they may act on (GitLab's access-request rules: Maintainer+
 * on a project, Owner on a group, directly or through an ancestor group). Plain functions over
 * the partition's SQLite (no Durable Object runtime needed), called from the same transactions
 * that apply a namespace object's outbox to the membership and requester indexes
 * (namespace-registry.ts), so the inbox moves with them and never drifts.
 *
 * `inbox` holds one row per manager and request, with the memberships the manager's standing
 * rests on (`grants`, canonical as `grantsOf` makes them), so keeping it costs, per request made or
 * gone, the managers of its source's chain (`request_scopes`: the source and its ancestors); per
 * member change, the pending requests at or below that group or project.
 *
 * What a manager's inbox shows is read from their own `User` object (worker/durable/user/inbox.ts),
 * one call whatever the number of trees: every change to a manager's share here raises their
 * number in `inbox_versions`, queues them in `inbox_outbox` and names the rows that changed in
 * `inbox_changes`, in the same transaction. The partition then sends a delta
 * (`inboxDeliveries`): those rows as they are now, or gone, from the version the `User` last took
 * (`sent`) to the version queued, so a change costs the rows it changes, not the manager's share.
 * What the `User` took is cleared (`inboxDelivered`), its alarm retrying the rest. A `User` that
 * does not hold the version a delta starts from asks for the whole share (`inboxResync`), which
 * goes next. Administrators act everywhere: their inbox is every pending request, read from each
 * partition (`everyRequest`) and versioned under `EVERY_REQUEST`.
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

const json = (ids: number[]) => JSON.stringify(ids);

/** A manager's row for one request (its source and requester) that came, went or changed. */
type Touched = { managerId: number; namespaceId: number; userId: number };

/**
 * In the transaction of the change that caused it: raises the inbox version of each manager
 * touched, queues them in the inbox outbox, and records which of their rows changed at that
 * version (what the next delta to their `User` carries); and raises the administrators' version
 * when a pending request came or went (theirs is read where it is, never sent).
 */
const bump = (sql: SqlStorage, touched: Touched[], everyRequest = false): void => {
  const byManager = new Map<number, Touched[]>();
  for (const t of touched) {
    const rows = byManager.get(t.managerId);
    if (rows) rows.push(t);
    else byManager.set(t.managerId, [t]);
  }
  for (const [id, rows] of byManager) {
    const { version } = sql
      .exec<{ version: number }>('INSERT INTO inbox_versions (user_id, version) VALUES (?, 1) ON CONFLICT (user_id) DO UPDATE SET version = version + 1 RETURNING version', id)
      .one();
    sql.exec('INSERT INTO inbox_outbox (manager_id, version) VALUES (?, ?) ON CONFLICT (manager_id) DO UPDATE SET version = excluded.version', id, version);
    for (const r of rows) {
      sql.exec(
        `INSERT INTO inbox_changes (manager_id, namespace_id, user_id, version) VALUES (?, ?, ?, ?)
         ON CONFLICT (manager_id, namespace_id, user_id) DO UPDATE SET version = excluded.version`,
        id,
        r.namespaceId,
        r.userId,
        version,
      );
    }
  }
  if (everyRequest) sql.exec('INSERT INTO inbox_versions (user_id, version) VALUES (?, 1) ON CONFLICT (user_id) DO UPDATE SET version = version + 1', EVERY_REQUEST);
};

/**
 * Memberships in `chain` (a source and its ancestors) that let their holder manage requests of a
 * source of this kind, today, with their levels and end dates.
 */
const MANAGING = `SELECT user_id, access_level, expires_at FROM memberships
  WHERE namespace_id IN (SELECT value FROM json_each(?)) AND access_level >= ? AND (expires_at IS NULL OR expires_at > ?)`;

/** Each manager of a request in `chain`, with their grants there (canonical JSON). */
const managersOf = (sql: SqlStorage, chain: number[], kind: NamespaceKind, today: string, managerId?: number): Map<number, string> => {
  const byManager = new Map<number, Grant[]>();
  const rows = sql
    .exec<{ user_id: number; access_level: number; expires_at: string | null }>(
      managerId === undefined ? MANAGING : `${MANAGING} AND user_id = ?`,
      json(chain),
      KINDS[kind].managesRequests,
      today,
      ...(managerId === undefined ? [] : [managerId]),
    )
    .toArray();
  for (const r of rows) byManager.set(r.user_id, [...(byManager.get(r.user_id) ?? []), [r.access_level, r.expires_at]]);
  return new Map([...byManager].map(([id, grants]) => [id, JSON.stringify(grantsOf(grants))]));
};

const putRow = (sql: SqlStorage, managerId: number, namespaceId: number, userId: number, grants: string) =>
  sql.exec(
    `INSERT INTO inbox (manager_id, namespace_id, user_id, grants) VALUES (?, ?, ?, ?)
     ON CONFLICT (manager_id, namespace_id, user_id) DO UPDATE SET grants = excluded.grants`,
    managerId,
    namespaceId,
    userId,
    grants,
  );

/**
 * A request in the requester index was made or changed (`requestedAt`) or went (null): its
 * managers' rows are replaced, and every manager it had or has is told (their `User` shows what
 * changed, if anything). The administrators' version rises when it came or went.
 */
export const requestChanged = (
  sql: SqlStorage,
  source: { id: number; kind: SourceKind },
  chain: number[],
  requesterId: number,
  requestedAt: string | null,
  today: string,
): void => {
  const managers = sql
    .exec<{ manager_id: number }>('DELETE FROM inbox WHERE namespace_id = ? AND user_id = ? RETURNING manager_id', source.id, requesterId)
    .toArray()
    .map((r) => r.manager_id);
  const wasPending = sql.exec('DELETE FROM request_scopes WHERE namespace_id = ? AND user_id = ? RETURNING scope_id', source.id, requesterId).toArray().length > 0;
  const kind = source.kind;
  const isPending = requestedAt !== null && kind !== 'user';
  if (isPending) {
    for (const scope of chain) sql.exec('INSERT INTO request_scopes (scope_id, namespace_id, user_id) VALUES (?, ?, ?)', scope, source.id, requesterId);
    for (const [managerId, grants] of managersOf(sql, chain, kind, today)) {
      putRow(sql, managerId, source.id, requesterId, grants);
      managers.push(managerId);
    }
  }
  bump(
    sql,
    managers.map((managerId) => ({ managerId, namespaceId: source.id, userId: requesterId })),
    wasPending !== isPending,
  );
};

/**
 * Judges one manager's row for one request again, from the indexes as they are now. Returns
 * whether it changed (the row came, went, or its grants moved).
 */
const refresh = (sql: SqlStorage, managerId: number, namespaceId: number, requesterId: number, today: string): boolean => {
  const request = sql
    .exec<{ kind: NamespaceKind }>(
      `SELECT n.kind FROM pending_requests p JOIN namespaces n ON n.id = p.namespace_id
       WHERE p.namespace_id = ? AND p.user_id = ? AND p.pending = 1`,
      namespaceId,
      requesterId,
    )
    .toArray()[0];
  const chain = sql
    .exec<{ scope_id: number }>('SELECT scope_id FROM request_scopes WHERE namespace_id = ? AND user_id = ?', namespaceId, requesterId)
    .toArray()
    .map((r) => r.scope_id);
  const grants = request && chain.length > 0 ? (managersOf(sql, chain, request.kind, today, managerId).get(managerId) ?? null) : null;
  const before = sql
    .exec<{ grants: string }>('SELECT grants FROM inbox WHERE manager_id = ? AND namespace_id = ? AND user_id = ?', managerId, namespaceId, requesterId)
    .toArray()[0];
  if (grants !== null) {
    putRow(sql, managerId, namespaceId, requesterId, grants);
    return before?.grants !== grants;
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
  const changed = below.filter((r) => refresh(sql, userId, r.namespace_id, r.user_id, today));
  bump(
    sql,
    changed.map((r) => ({ managerId: userId, namespaceId: r.namespace_id, userId: r.user_id })),
  );
};

/** Rows of the inbox, as a manager's row for one request. */
const TOUCHED_COLUMNS = 'manager_id AS managerId, namespace_id AS namespaceId, user_id AS userId';

/** Groups or projects were renamed (a new name, or a new full path): their requests' managers see it. */
export const sourcesRenamed = (sql: SqlStorage, ids: number[]): void => {
  const rows = sql.exec<Touched>(`SELECT ${TOUCHED_COLUMNS} FROM inbox WHERE namespace_id IN (SELECT value FROM json_each(?))`, json(ids)).toArray();
  const anyPending = sql.exec('SELECT 1 FROM request_scopes WHERE namespace_id IN (SELECT value FROM json_each(?)) LIMIT 1', json(ids)).toArray().length > 0;
  bump(sql, rows, anyPending);
};

/** A group or project is being deleted: its requests leave every inbox. */
export const requestsDeletedWith = (sql: SqlStorage, namespaceId: number): void => {
  const rows = sql.exec<Touched>(`DELETE FROM inbox WHERE namespace_id = ? RETURNING ${TOUCHED_COLUMNS}`, namespaceId).toArray();
  const had = sql.exec('DELETE FROM request_scopes WHERE namespace_id = ? RETURNING scope_id', namespaceId).toArray().length > 0;
  bump(sql, rows, had);
};

/**
 * A requester's username, name or state changed, or they are being deleted: the inboxes showing
 * their requests show the new names, or (not active) no longer show them. Called in the
 * transaction that changes the users row.
 */
export const requesterChanged = (sql: SqlStorage, userId: number): void => {
  const rows = sql
    .exec<Touched>(
      `SELECT i.manager_id AS managerId, i.namespace_id AS namespaceId, i.user_id AS userId
       FROM pending_requests p JOIN inbox i ON i.namespace_id = p.namespace_id AND i.user_id = p.user_id
       WHERE p.user_id = ? AND p.pending = 1`,
      userId,
    )
    .toArray();
  const anyPending = sql.exec('SELECT 1 FROM pending_requests WHERE user_id = ? AND pending = 1 LIMIT 1', userId).toArray().length > 0;
  bump(sql, rows, anyPending);
};

// ---- delivering managers' changes to their `User` ----

/** A manager's update from this partition, to send to their `User` (`takeInbox`). */
export interface InboxDelivery {
  managerId: number;
  update: InboxUpdate;
}

/**
 * A manager's rows as their inbox shows them (requests with active requesters, with the names
 * shown), read from `from` (the `inbox` table as `i`, or the rows changed as `c` joined to it), by
 * the manager's id in `manager` (the column the plan starts from).
 */
const shareRows = (sql: SqlStorage, from: string, manager: string, managerId: number): InboxShareRow[] =>
  sql
    .exec<Omit<InboxShareRow, 'grants'> & { grants: string }>(
      `SELECT i.namespace_id, i.user_id, p.requested_at, n.kind, n.name AS source_name, n.full_path AS source_full_path, u.username, u.name, i.grants, p.details
       FROM ${from}
         JOIN pending_requests p ON p.namespace_id = i.namespace_id AND p.user_id = i.user_id AND p.pending = 1 AND p.requested_at IS NOT NULL
         JOIN namespaces n ON n.id = i.namespace_id
         JOIN users u ON u.id = i.user_id AND u.state = ?
       WHERE ${manager} = ?`,
      SHOWN_REQUESTER_STATE,
      managerId,
    )
    .toArray()
    .map((r) => ({ ...r, grants: JSON.parse(r.grants) as Grant[] }));

/** The whole share: what a manager's inbox shows of this partition now. */
const wholeShare = (sql: SqlStorage, managerId: number, version: number): InboxUpdate => ({ version, since: null, rows: shareRows(sql, 'inbox i', 'i.manager_id', managerId), gone: [] });

/**
 * The delta after `since`: each of the manager's rows changed since, as the inbox shows it now, or
 * gone. Its size is the rows changed, whatever the share's.
 */
const delta = (sql: SqlStorage, managerId: number, since: number, version: number): InboxUpdate => {
  const rows = shareRows(
    sql,
    'inbox_changes c JOIN inbox i ON i.manager_id = c.manager_id AND i.namespace_id = c.namespace_id AND i.user_id = c.user_id',
    'c.manager_id',
    managerId,
  );
  const shown = new Set(rows.map((r) => `${r.namespace_id}:${r.user_id}`));
  const gone = sql
    .exec<{ namespace_id: number; user_id: number }>('SELECT namespace_id, user_id FROM inbox_changes WHERE manager_id = ?', managerId)
    .toArray()
    .filter((k) => !shown.has(`${k.namespace_id}:${k.user_id}`))
    .map((k): RequestKey => [k.namespace_id, k.user_id]);
  return { version, since, rows, gone };
};

/**
 * Up to `limit` queued managers' updates, each read at the version queued: the rows changed since
 * the version their `User` last took, or the whole share when it asked for it. Run in a transaction.
 */
export const inboxDeliveries = (sql: SqlStorage, limit: number): InboxDelivery[] =>
  sql
    .exec<{ manager_id: number; version: number; resync: number; sent: number }>(
      `SELECT o.manager_id, o.version, o.resync, v.sent FROM inbox_outbox o JOIN inbox_versions v ON v.user_id = o.manager_id
       ORDER BY o.manager_id LIMIT ?`,
      limit,
    )
    .toArray()
    .map((r) => ({ managerId: r.manager_id, update: r.resync ? wholeShare(sql, r.manager_id, r.version) : delta(sql, r.manager_id, r.sent, r.version) }));

/**
 * A manager's `User` holds this partition's share at `version` (it took the update, or held it
 * already): the rows changed up to it are forgotten, and the manager dequeued unless a newer
 * change queued them again (the next delta starts from `version`).
 */
export const inboxDelivered = (sql: SqlStorage, managerId: number, version: number): void => {
  sql.exec('UPDATE inbox_versions SET sent = MAX(sent, ?) WHERE user_id = ?', version, managerId);
  sql.exec('DELETE FROM inbox_changes WHERE manager_id = ? AND version <= ?', managerId, version);
  sql.exec('DELETE FROM inbox_outbox WHERE manager_id = ? AND version <= ?', managerId, version);
  sql.exec('UPDATE inbox_outbox SET resync = 0 WHERE manager_id = ?', managerId);
};

/** A manager's `User` does not hold the version a delta starts from: their whole share goes next. */
export const inboxResync = (sql: SqlStorage, managerId: number): void => {
  sql.exec('UPDATE inbox_outbox SET resync = 1 WHERE manager_id = ?', managerId);
};

/** Whether some manager's update still waits to be sent. */
export const inboxOutboxWaiting = (sql: SqlStorage): boolean => sql.exec('SELECT 1 FROM inbox_outbox LIMIT 1').toArray().length > 0;

// ---- the administrators' inbox: every pending request ----

/**
 * The first `limit` of every pending request here, oldest first (index `pending_requests_open`) unless the filter sorts otherwise, with the
 * administrators' version read in the same transaction; only the version while it is `known`.
 * Run in a transaction.
 */
export const everyRequest = (sql: SqlStorage, filter: InboxFilter, limit: number, known: KnownVersion): { version: number; page: InboxPage | null } => {
  const version = sql.exec<{ version: number }>('SELECT version FROM inbox_versions WHERE user_id = ?', EVERY_REQUEST).toArray()[0]?.version ?? 0;
  if (known === 'any' || known === version) return { version, page: null };
  const columns = { kind: 'n.kind', requestedAt: 'i.requested_at', fullPath: 'n.full_path', username: 'u.username', name: 'u.name', namespaceId: 'i.namespace_id', userId: 'i.user_id' };
  const filtered = filterConditions(filter, columns);
  const where = ['i.pending = 1', 'i.requested_at IS NOT NULL', 'u.state = ?', ...filtered.where];
  const args = [SHOWN_REQUESTER_STATE, ...filtered.args];
  const body = `FROM pending_requests i JOIN users u ON u.id = i.user_id JOIN namespaces n ON n.id = i.namespace_id WHERE ${where.join(' AND ')}`;
  const total = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n ${body}`, ...args).one().n;
  const items = sql
    .exec<InboxItem>(
      `SELECT i.namespace_id, n.kind, n.name AS source_name, n.full_path AS source_full_path, i.user_id, u.username, u.name, u.state,
              i.requested_at, ${OWNER} AS access_level, i.details
       ${body} ORDER BY ${orderBy(filter.sort, columns)} LIMIT ?`,
      ...args,
      limit,
    )
    .toArray();
  return { version, page: { version, total, items } };
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
  outcome: 'approved' | 'denied' | 'withdrawn' | 'lapsed' | null;
  access_level: number | null;
  expires_at: string | null;
  decided_at: string | null;
  decided_by: number | null;
  /** What was asked, the approvals, a denial's reason (JSON, see `askOfDetails`). */
  details: string | null;
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
              p.outcome, p.access_level, p.expires_at, p.decided_at, p.decided_by, p.details
       FROM pending_requests p JOIN namespaces n ON n.id = p.namespace_id
       WHERE p.user_id = ? AND p.requested_at IS NOT NULL
         AND (p.pending = 1 OR (p.outcome IN ('approved', 'denied', 'withdrawn', 'lapsed') AND (p.decided_at >= ? OR (p.outcome = 'approved' AND p.expires_at >= ?))))
       ORDER BY p.requested_at, p.namespace_id`,
      userId,
      since,
      sinceDate,
    )
    .toArray();
