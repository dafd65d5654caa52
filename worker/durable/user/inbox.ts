import type { NamespaceKind } from '../../../shared/access-levels';
import type { UserState } from '../user-lifecycle';

/**
 * A manager's owners' inbox, kept in their own `User` object: every pending access request they
 * may act on (GitLab's rules: Maintainer or above on a project, Owner on a group, directly or
 * through an ancestor group), whatever the number of trees, so a page and its version cost one
 * object call. Plain functions over the object's SQLite (no Durable Object runtime needed).
 *
 * The index partitions stay the authority: each judges, in the transaction that changes its
 * indexes, which managers a change concerns, and queues the manager in its inbox outbox with the
 * rows that changed; it then sends an update (`takeUpdate`), retried by its alarm. An update is
 * a delta (the rows changed after the version `since`, upserted or gone) so that a change costs
 * the rows it changes, not the manager's whole share (an owner may have 100,000 pending requests
 * in one partition). Each row is sent as it is now, not as the change that touched it, so a delta
 * is right on top of any version from `since` on: it is taken when the share held here is at
 * least `since` and older than its version; a late or repeated one (this share already as new)
 * is ignored; one starting after what is held (a gap: this object lost track of that partition's
 * share) is refused with `resync`, and the partition sends the whole share next (`since` null),
 * which replaces what is held.
 *
 * Expiry (a membership ends at 00:00 UTC of its `expires_at`): each row carries the memberships
 * its standing rests on (`grants`: the highest level first, each with its end date), so from the
 * day one ends the row is judged again here (`settle`, before any read), without the partition:
 * a manager whose membership expired sees nothing from that day even if the object's alarm that
 * removes the member is late.
 *
 * The version (the inbox's ETag) is this object's own: it rises exactly when what the inbox shows
 * changes, whether by an update that shows something new or by an expiry.
 */

/** One membership a manager's standing over a request rests on: its level, and its last day's end (null: none). */
export type Grant = [level: number, until: string | null];

/** One pending request in a manager's share of a partition, as the partition sends it. */
export type InboxShareRow = {
  namespace_id: number;
  user_id: number;
  requested_at: string;
  kind: NamespaceKind;
  source_name: string;
  source_full_path: string;
  username: string;
  name: string;
  /** The manager's memberships over the request's source and its ancestors that manage requests, as `grantsOf` orders them. */
  grants: Grant[];
  /** What was asked and the approvals so far (JSON, as the partition's requester index has it). */
  details: string | null;
};

/** A request in a manager's share: its source's id and its requester's. */
export type RequestKey = [namespaceId: number, userId: number];

/**
 * What a partition sends a manager's `User`: their share of it at `version`, whole (`since` null:
 * `rows` is all of it) or as the rows changed after `since` (`rows` as they are now, `gone` no
 * longer there).
 */
export interface InboxUpdate {
  version: number;
  since: number | null;
  rows: InboxShareRow[];
  gone: RequestKey[];
}

/** How a `User` answered an update: taken; already held (as new or newer); or asking for the whole share (it does not hold `since`). */
export type InboxAnswer = 'taken' | 'held' | 'resync';

export interface InboxFilter {
  kind?: NamespaceKind;
  /** ISO 8601, UTC with milliseconds: requests made at or after it. */
  minRequestedAt?: string;
  /** ISO 8601, UTC with milliseconds: requests made before it (older than). */
  maxRequestedAt?: string;
  /** Text the group's or project's full path contains (any case). */
  source?: string;
  /** Text the requester's username or name contains (any case). */
  requester?: string;
  /** The order of the page; oldest first unless said. */
  sort?: InboxSort;
}

/** The orders an inbox page can be read in. */
export const INBOX_SORTS = ['oldest', 'newest', 'requester', 'source'] as const;
export type InboxSort = (typeof INBOX_SORTS)[number];

/** The columns of an inbox read, by what they hold (each inbox has its own table and aliases). */
interface InboxColumns {
  kind: string;
  requestedAt: string;
  fullPath: string;
  username: string;
  name: string;
  namespaceId: string;
  userId: string;
}

/** The `ORDER BY` of a sort; ties always by request time, then source and requester ids, so pages never overlap. */
export const orderBy = (sort: InboxSort | undefined, c: InboxColumns): string => {
  const tail = `${c.namespaceId}, ${c.userId}`;
  switch (sort ?? 'oldest') {
    case 'oldest':
      return `${c.requestedAt}, ${tail}`;
    case 'newest':
      return `${c.requestedAt} DESC, ${tail}`;
    case 'requester':
      return `${c.username} COLLATE NOCASE, ${c.requestedAt}, ${tail}`;
    case 'source':
      return `${c.fullPath} COLLATE NOCASE, ${c.requestedAt}, ${tail}`;
  }
};

/** The same order as `orderBy`, for pages merged from several reads (the administrators'). */
export const compareBy =
  (sort: InboxSort | undefined) =>
  (a: InboxItem, b: InboxItem): number => {
    const time = a.requested_at.localeCompare(b.requested_at);
    const tail = a.namespace_id - b.namespace_id || a.user_id - b.user_id;
    const nocase = (x: string, y: string) => {
      const [lx, ly] = [x.toLowerCase(), y.toLowerCase()];
      return lx < ly ? -1 : lx > ly ? 1 : 0;
    };
    switch (sort ?? 'oldest') {
      case 'oldest':
        return time || tail;
      case 'newest':
        return -time || tail;
      case 'requester':
        return nocase(a.username, b.username) || time || tail;
      case 'source':
        return nocase(a.source_full_path, b.source_full_path) || time || tail;
    }
  };

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
  details: string | null;
};

export interface InboxPage {
  version: number;
  total: number;
  items: InboxItem[];
}

/** What the client's ETag said: a version of the inbox, any (`*`), or nothing. */
export type KnownVersion = number | 'any' | null;

/** The filter as SQL conditions over an inbox's columns (every inbox reads it so). Text matches any case, without LIKE's wildcards. */
export const filterConditions = (filter: InboxFilter, columns: InboxColumns): { where: string[]; args: unknown[] } => {
  const where: string[] = [];
  const args: unknown[] = [];
  if (filter.kind) {
    where.push(`${columns.kind} = ?`);
    args.push(filter.kind);
  }
  if (filter.minRequestedAt) {
    where.push(`${columns.requestedAt} >= ?`);
    args.push(filter.minRequestedAt);
  }
  if (filter.maxRequestedAt) {
    where.push(`${columns.requestedAt} < ?`);
    args.push(filter.maxRequestedAt);
  }
  if (filter.source) {
    where.push(`instr(lower(${columns.fullPath}), ?) > 0`);
    args.push(filter.source.toLowerCase());
  }
  if (filter.requester) {
    where.push(`(instr(lower(${columns.username}), ?) > 0 OR instr(lower(${columns.name}), ?) > 0)`);
    args.push(filter.requester.toLowerCase(), filter.requester.toLowerCase());
  }
  return { where, args };
};

/**
 * The grants that can matter, canonical (so equal standings compare equal): highest level first,
 * and each kept only if it lasts longer than every higher one (null: no end). The level on a day
 * is that of the first grant still running; the row next changes when the first one ends.
 */
export const grantsOf = (memberships: Grant[]): Grant[] => {
  const lastsLonger = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : b.localeCompare(a));
  const sorted = [...memberships].sort((a, b) => b[0] - a[0] || lastsLonger(a[1], b[1]));
  const kept: Grant[] = [];
  for (const g of sorted) {
    const last = kept.at(-1);
    if (last && (last[1] === null || (g[1] !== null && g[1] <= last[1]))) continue;
    kept.push(g);
  }
  return kept;
};

/** The grants still running on `today` (a membership ends at 00:00 UTC of its date). */
const running = (grants: Grant[], today: string): Grant[] => grants.filter(([, until]) => until === null || until > today);

/** The visible part of a stored row: what the inbox shows of it. */
const shown = (r: Omit<InboxItem, 'state'>) =>
  JSON.stringify([r.namespace_id, r.user_id, r.requested_at, r.kind, r.source_name, r.source_full_path, r.username, r.name, r.access_level, r.details]);

const SHOWN_COLUMNS = 'namespace_id, user_id, requested_at, kind, source_name, source_full_path, username, name, access_level, details';

/** What the inbox shows of one partition's share, in one order. */
const shownOf = (sql: SqlStorage, partition: number): string[] =>
  sql
    .exec<Parameters<typeof shown>[0]>(`SELECT ${SHOWN_COLUMNS} FROM inbox WHERE partition = ? ORDER BY namespace_id, user_id`, partition)
    .toArray()
    .map(shown);

const raiseVersion = (sql: SqlStorage): void => {
  sql.exec('INSERT INTO inbox_version (singleton, version) VALUES (1, 1) ON CONFLICT (singleton) DO UPDATE SET version = version + 1');
};

/**
 * Rows whose first grant has ended by `today` are judged again from the grants still running:
 * a lower level, or gone. The version rises when that changes what the inbox shows.
 */
const settle = (sql: SqlStorage, today: string): void => {
  const due = sql
    .exec<{ namespace_id: number; user_id: number; grants: string; access_level: number }>(
      'SELECT namespace_id, user_id, grants, access_level FROM inbox WHERE until IS NOT NULL AND until <= ?',
      today,
    )
    .toArray();
  let changed = false;
  for (const r of due) {
    const left = running(JSON.parse(r.grants) as Grant[], today);
    if (left.length === 0) {
      sql.exec('DELETE FROM inbox WHERE namespace_id = ? AND user_id = ?', r.namespace_id, r.user_id);
      changed = true;
      continue;
    }
    sql.exec('UPDATE inbox SET grants = ?, access_level = ?, until = ? WHERE namespace_id = ? AND user_id = ?', JSON.stringify(left), left[0][0], left[0][1], r.namespace_id, r.user_id);
    changed ||= left[0][0] !== r.access_level;
  }
  if (changed) raiseVersion(sql);
};

/** What the inbox shows of some requests (those there), by request. */
const shownOfKeys = (sql: SqlStorage, keys: RequestKey[]): Map<string, string> => {
  const shownNow = new Map<string, string>();
  for (const [namespaceId, userId] of keys) {
    const row = sql.exec<Parameters<typeof shown>[0]>(`SELECT ${SHOWN_COLUMNS} FROM inbox WHERE namespace_id = ? AND user_id = ?`, namespaceId, userId).toArray()[0];
    if (row) shownNow.set(`${namespaceId}:${userId}`, shown(row));
  }
  return shownNow;
};

/** A row as the partition sent it, with the grants still running (none: not stored). */
const putRow = (sql: SqlStorage, partition: number, r: InboxShareRow, today: string): void => {
  const grants = running(r.grants, today);
  if (grants.length === 0) {
    sql.exec('DELETE FROM inbox WHERE namespace_id = ? AND user_id = ? AND partition = ?', r.namespace_id, r.user_id, partition);
    return;
  }
  sql.exec(
    `INSERT INTO inbox (namespace_id, user_id, partition, requested_at, kind, source_name, source_full_path, username, name, grants, access_level, until, details)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (namespace_id, user_id) DO UPDATE SET partition = excluded.partition, requested_at = excluded.requested_at, kind = excluded.kind,
       source_name = excluded.source_name, source_full_path = excluded.source_full_path, username = excluded.username, name = excluded.name,
       grants = excluded.grants, access_level = excluded.access_level, until = excluded.until, details = excluded.details`,
    r.namespace_id,
    r.user_id,
    partition,
    r.requested_at,
    r.kind,
    r.source_name,
    r.source_full_path,
    r.username,
    r.name,
    JSON.stringify(grants),
    grants[0][0],
    grants[0][1],
    r.details ?? null,
  );
};

/** Whether two readings of what the inbox shows differ. */
const differ = (before: string[], after: string[]) => before.length !== after.length || before.some((line, i) => line !== after[i]);

/**
 * A partition's update of this manager's share of it (see above): a whole share replaces what is
 * held; a delta replaces or removes the rows it names. Grants already ended are left out. The
 * version rises when what the inbox shows changed. Run in a transaction.
 */
export const takeUpdate = (sql: SqlStorage, partition: number, update: InboxUpdate, today: string): InboxAnswer => {
  const held = sql.exec<{ version: number }>('SELECT version FROM inbox_shares WHERE partition = ?', partition).toArray()[0]?.version ?? 0;
  if (update.version <= held) return 'held';
  if (update.since !== null && update.since > held) return 'resync';
  settle(sql, today);
  sql.exec('INSERT INTO inbox_shares (partition, version) VALUES (?, ?) ON CONFLICT (partition) DO UPDATE SET version = excluded.version', partition, update.version);
  let changed: boolean;
  if (update.since === null) {
    const before = shownOf(sql, partition);
    sql.exec('DELETE FROM inbox WHERE partition = ?', partition);
    for (const r of update.rows) putRow(sql, partition, r, today);
    changed = differ(before, shownOf(sql, partition));
  } else {
    const keys: RequestKey[] = [...update.rows.map((r): RequestKey => [r.namespace_id, r.user_id]), ...update.gone];
    const before = shownOfKeys(sql, keys);
    for (const [namespaceId, userId] of update.gone) sql.exec('DELETE FROM inbox WHERE namespace_id = ? AND user_id = ? AND partition = ?', namespaceId, userId, partition);
    for (const r of update.rows) putRow(sql, partition, r, today);
    const after = shownOfKeys(sql, keys);
    changed = before.size !== after.size || [...after].some(([key, line]) => before.get(key) !== line);
  }
  if (changed) raiseVersion(sql);
  return 'taken';
};

/** The inbox version (the ETag), after judging rows whose grants ended by `today`. Run in a transaction. */
export const inboxVersion = (sql: SqlStorage, today: string): number => {
  settle(sql, today);
  return sql.exec<{ version: number }>('SELECT version FROM inbox_version').toArray()[0]?.version ?? 0;
};

/** The most the header's count reads: past it, the header says "99+" (as GitLab's badges do). */
export const WAITING_CAP = 100;

/**
 * How many requests wait in the inbox, up to `WAITING_CAP` (the console's header, on every page:
 * at most that many rows read), after judging rows whose grants ended by `today`. Run in a transaction.
 */
export const inboxCount = (sql: SqlStorage, today: string): number => {
  settle(sql, today);
  return sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM (SELECT 1 FROM inbox LIMIT ?)', WAITING_CAP).one().n;
};

/**
 * A page of the inbox (oldest request first unless the filter sorts otherwise), with its version; only the version when that is
 * still `known` (the client's ETag), so an unchanged poll reads one row. Run in a transaction.
 */
export const readInbox = (sql: SqlStorage, filter: InboxFilter, offset: number, limit: number, known: KnownVersion, today: string): { version: number; page: InboxPage | null } => {
  const version = inboxVersion(sql, today);
  if (known === 'any' || known === version) return { version, page: null };
  const columns = { kind: 'kind', requestedAt: 'requested_at', fullPath: 'source_full_path', username: 'username', name: 'name', namespaceId: 'namespace_id', userId: 'user_id' };
  const { where, args } = filterConditions(filter, columns);
  const body = `FROM inbox WHERE ${['1 = 1', ...where].join(' AND ')}`;
  const total = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n ${body}`, ...args).one().n;
  const items = sql
    .exec<InboxItem>(
      `SELECT namespace_id, kind, source_name, source_full_path, user_id, username, name, 'active' AS state, requested_at, access_level, details
       ${body} ORDER BY ${orderBy(filter.sort, columns)} LIMIT ? OFFSET ?`,
      ...args,
      limit,
      offset,
    )
    .toArray();
  return { version, page: { version, total, items } };
};
