import type { Visibility } from '../../shared/api-types';
import { VISIBILITIES } from '../../shared/schemas';
import { isoNow, todayUtc } from '../clock';
import { membershipChanged, OUTCOME_DAYS, requestChanged, requestsOf, type OwnRequestRow } from './index-partition/inbox-index';
import { problems } from '../errors';
import { idInTreeOf } from './partitions';
import { fail, ok, type Result } from './result';
import type { UserState } from './user-lifecycle';

/**
 * The registry's half of groups and projects: the path registry (ids, full paths, the tree of
 * parents; the Directory's, copied whole into the index partitions of their trees) and the
 * membership and requester indexes that the namespaces' Durable Objects push to (the index
 * partitions'). Plain functions over either's SQLite, which share these tables' columns, called
 * from their methods (one transaction each).
 */

type NamespaceRowKind = 'group' | 'project' | 'user';

/** The group or personal namespace a group or project lives in. */
export interface NamespaceParent {
  id: number;
  name: string;
  path: string;
  kind: 'group' | 'user';
  full_path: string;
  parent_id: number | null;
}

export interface NamespaceRow {
  id: number;
  kind: NamespaceRowKind;
  name: string;
  path: string;
  full_path: string;
  /** "Acme / Website": the names along the path. */
  full_name: string;
  parent_id: number | null;
  visibility: Visibility;
  request_access_enabled: boolean;
  /** A group's members must have a second factor (GitLab's group setting); false for projects. */
  require_two_factor_authentication: boolean;
  description: string;
  creator_id: number | null;
  created_at: string;
  /** Rises with every change a namespace's object keeps a copy of (see `NamespaceSnapshot`). */
  version: number;
  parent: NamespaceParent | null;
}

/**
 * What a group's or project's own object keeps of its registry row: the settings it judges by and
 * the full path it is known by, with the row's version, so the object keeps the newest it is told.
 */
export interface NamespaceSnapshot {
  visibility: Visibility;
  request_access_enabled: boolean;
  full_path: string;
  /** The name its events carry. */
  name: string;
  version: number;
}

export const snapshotOf = (row: Omit<NamespaceRow, 'parent'>): NamespaceSnapshot => ({
  visibility: row.visibility,
  request_access_enabled: row.request_access_enabled,
  full_path: row.full_path,
  name: row.name,
  version: row.version,
});

/** `PUT /groups/:id`, `PUT /projects/:id`: the fields given are changed. */
export interface NamespaceChanges {
  name?: string;
  path?: string;
  description?: string;
  visibility?: Visibility;
  request_access_enabled?: boolean;
  require_two_factor_authentication?: boolean;
}

/**
 * Why a pending request went: approved (or its requester added as a member), denied, withdrawn by
 * the requester, or removed with its requester (blocked or deleted).
 */
export type RequestOutcome = 'approved' | 'denied' | 'withdrawn' | 'removed' | 'lapsed';

/** A pending access request appearing (pending) or going (not), pushed like member changes; `details`: JSON of what was asked, approvals, a denial's reason. */
export interface RequestChange {
  userId: number;
  pending: boolean;
  version: number;
  requestedAt: string;
  /** Null while pending. */
  outcome: RequestOutcome | null;
  /** What an approval granted. */
  grantedLevel: number | null;
  expiresAt: string | null;
  decidedBy: number | null;
  decidedAt: string | null;
  details: string | null;
}

export interface NewNamespace {
  kind: 'group' | 'project';
  name: string;
  path: string;
  parentId: number | null;
  visibility: Visibility;
  requestAccessEnabled: boolean;
  /** A group's; always false for a project. */
  requireTwoFactor?: boolean;
  description: string;
  creatorId: number;
}

/** A group or project with its ancestors. */
export interface ResolvedNamespace {
  namespace: NamespaceRow;
  /** Ancestor ids, nearest first. */
  ancestorIds: number[];
}

/** One member change pushed by a namespace's Durable Object; level 0 means "no longer a member". */
export interface MembershipChange {
  userId: number;
  accessLevel: number;
  createdAt: string;
  createdBy: number | null;
  /** `YYYY-MM-DD`: the membership ends at 00:00 UTC that day. */
  expiresAt?: string | null;
  /** Increases with every change in that namespace; older changes never overwrite newer ones. */
  version: number;
}

export interface ListFilter {
  userId: number;
  admin: boolean;
  minAccessLevel?: number;
  membership?: boolean;
  search?: string;
}

export interface EffectiveMember {
  user_id: number;
  username: string;
  name: string;
  state: UserState;
  access_level: number;
  created_at: string;
  expires_at: string | null;
  created_by: { id: number; username: string; name: string } | null;
}

/** GitLab's nesting limit for subgroups. */
export const MAX_DEPTH = 20;

/** Top-level paths the Worker serves itself (pages, API, assets), so no namespace may take them. */
export const RESERVED_TOP_LEVEL = new Set([
  '-', '.well-known', 'admin', 'api', 'assets', 'dashboard', 'explore', 'groups', 'help', 'login', 'oauth', 'projects', 'users',
]);

/** A registry row's columns, as every read of one selects them. */
const ROW_COLUMNS = `n.id, n.kind, n.name, n.path, n.full_path, n.full_name, n.parent_id, n.visibility, n.request_access_enabled,
  n.require_two_factor_authentication, n.description, n.creator_id, n.created_at, n.version`;
type RawFlags = { request_access_enabled: number; require_two_factor_authentication: number };
const flags = (r: RawFlags) => ({ request_access_enabled: r.request_access_enabled === 1, require_two_factor_authentication: r.require_two_factor_authentication === 1 });

const SELECT_NAMESPACE = `
  SELECT ${ROW_COLUMNS},
         p.id AS p_id, p.name AS p_name, p.path AS p_path, p.kind AS p_kind, p.full_path AS p_full_path, p.parent_id AS p_parent_id
  FROM namespaces n LEFT JOIN namespaces p ON p.id = n.parent_id`;

type RawNamespace = Omit<NamespaceRow, keyof RawFlags | 'parent'> & RawFlags & {
  p_id: number | null;
  p_name: string | null;
  p_path: string | null;
  p_kind: 'group' | 'user' | null;
  p_full_path: string | null;
  p_parent_id: number | null;
};

const toNamespace = ({ p_id, p_name, p_path, p_kind, p_full_path, p_parent_id, ...r }: RawNamespace): NamespaceRow => ({
  ...r,
  ...flags(r),
  parent: p_id === null ? null : { id: p_id, name: p_name!, path: p_path!, kind: p_kind!, full_path: p_full_path!, parent_id: p_parent_id },
});

const pathTaken = () => problems.badRequest({ path: ['has already been taken'] });
const isUniqueViolation = (e: unknown): boolean => e instanceof Error && /UNIQUE constraint failed/.test(e.message);

const getById = (sql: SqlStorage, id: number): NamespaceRow | null => {
  const row = sql.exec<RawNamespace>(`${SELECT_NAMESPACE} WHERE n.id = ?`, id).toArray()[0];
  return row ? toNamespace(row) : null;
};

/** A new group or project; below a top-level row its id is in its tree's partition of `partitions` (partitions.ts `idInTreeOf`). */
export const createNamespace = (sql: SqlStorage, input: NewNamespace, partitions: number): Result<NamespaceRow> => {
  const parent = input.parentId === null ? null : getById(sql, input.parentId);
  if (input.parentId !== null) {
    const parentKinds = input.kind === 'group' ? ['group'] : ['group', 'user'];
    if (!parent || !parentKinds.includes(parent.kind)) return fail(problems.notFound(input.kind === 'group' ? 'Parent Group' : 'Namespace'));
    if (parent.full_path.split('/').length >= MAX_DEPTH) return fail(problems.badRequest({ parent_id: ['has too deep a level of nesting'] }));
  } else {
    if (RESERVED_TOP_LEVEL.has(input.path.toLowerCase())) return fail(problems.badRequest({ path: [`${input.path} is a reserved name`] }));
    // A top-level path is also a user's personal namespace, even before that user has a project.
    const user = sql.exec('SELECT 1 FROM users WHERE username = ?', input.path).toArray()[0];
    if (user) return fail(pathTaken());
  }
  const now = isoNow();
  const last = () => sql.exec<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'namespaces'").toArray()[0]?.seq ?? 0;
  try {
    const { id } = sql
      .exec<{ id: number }>(
        `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, require_two_factor_authentication,
           description, creator_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        parent ? idInTreeOf(ancestorIdsOf(sql, parent.id).at(-1) ?? parent.id, last(), partitions) : null,
        input.kind,
        input.name,
        input.path,
        parent ? `${parent.full_path}/${input.path}` : input.path,
        parent ? `${parent.full_name} / ${input.name}` : input.name,
        input.parentId,
        input.visibility,
        input.requestAccessEnabled ? 1 : 0,
        input.kind === 'group' && input.requireTwoFactor ? 1 : 0,
        input.description,
        input.creatorId,
        now,
      )
      .one();
    return ok(getById(sql, id)!);
  } catch (e) {
    if (isUniqueViolation(e)) return fail(pathTaken());
    throw e;
  }
};

/** Whether a top-level path is taken by a group (users and groups share the top-level namespace). */
export const topLevelGroupExists = (sql: SqlStorage, path: string): boolean =>
  sql.exec("SELECT 1 FROM namespaces WHERE parent_id IS NULL AND kind = 'group' AND full_path = ?", path).toArray().length > 0;

/** A user's personal namespace (path = username), created when they first create a project in it. */
export const ensureUserNamespace = (sql: SqlStorage, user: { username: string; name: string }): Result<NamespaceRow> => {
  sql.exec(
    `INSERT INTO namespaces (kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, created_at)
     VALUES ('user', ?, ?, ?, ?, NULL, 'public', 0, ?) ON CONFLICT (full_path) DO NOTHING`,
    user.name,
    user.username,
    user.username,
    user.name,
    isoNow(),
  );
  const row = sql.exec<RawNamespace>(`${SELECT_NAMESPACE} WHERE n.full_path = ?`, user.username).toArray()[0];
  return row && row.kind === 'user' ? ok(toNamespace(row)) : fail(pathTaken());
};

/** Ids of a group's or project's ancestor groups (or personal namespace), nearest first. */
export const ancestorIdsOf = (sql: SqlStorage, id: number): number[] =>
  sql
    .exec<{ id: number }>(
      `WITH RECURSIVE up (id, parent_id, depth) AS (
         SELECT id, parent_id, 0 FROM namespaces WHERE id = ?
         UNION ALL
         SELECT n.id, n.parent_id, up.depth + 1 FROM namespaces n JOIN up ON n.id = up.parent_id WHERE up.depth < ?
       ) SELECT id FROM up WHERE depth > 0 ORDER BY depth`,
      id,
      MAX_DEPTH + 1,
    )
    .toArray()
    .map((r) => r.id);

/** A group or project by integer id or full path (case-insensitive), with its ancestors. */
export const resolveNamespace = (sql: SqlStorage, kind: 'group' | 'project', ref: number | string): ResolvedNamespace | null => {
  const raw =
    typeof ref === 'number'
      ? sql.exec<RawNamespace>(`${SELECT_NAMESPACE} WHERE n.id = ? AND n.kind = ?`, ref, kind).toArray()[0]
      : sql.exec<RawNamespace>(`${SELECT_NAMESPACE} WHERE n.full_path = ? COLLATE NOCASE AND n.kind = ?`, ref, kind).toArray()[0];
  if (!raw) return null;
  return { namespace: toNamespace(raw), ancestorIds: ancestorIdsOf(sql, raw.id) };
};

/** A registry row as the index partition of its tree keeps it, with the id of the tree's root. */
export type RegistryCopy = Omit<NamespaceRow, 'parent'> & { root_id: number };

/** The registry rows of `ids` that still exist, with their trees' roots, as the partitions take them. */
export const registryCopies = (sql: SqlStorage, ids: number[]): RegistryCopy[] =>
  sql
    .exec<Omit<RawNamespace, `p_${string}`> & { root_id: number }>(
      `WITH RECURSIVE up (start, id, parent_id) AS (
         SELECT id, id, parent_id FROM namespaces WHERE id IN (SELECT value FROM json_each(?))
         UNION ALL
         SELECT up.start, n.id, n.parent_id FROM namespaces n JOIN up ON n.id = up.parent_id
       )
       SELECT ${ROW_COLUMNS}, up.id AS root_id
       FROM up JOIN namespaces n ON n.id = up.start WHERE up.parent_id IS NULL ORDER BY n.id`,
      JSON.stringify(ids),
    )
    .toArray()
    .map((r) => ({ ...r, ...flags(r) }));

/** A list that can hold only what the user reaches (their memberships and everything below them). */
export const listsOnlyReached = (filter: ListFilter): boolean => filter.membership === true || (filter.minAccessLevel !== undefined && !filter.admin);

/**
 * Groups or projects the user may see (by their memberships `levels`, `[namespace id, level]`), optionally only those where their effective level (direct
 * or inherited from an ancestor group) is at least `minAccessLevel`, or where they are a member.
 */
export const listNamespaces = (
  sql: SqlStorage,
  kind: 'group' | 'project',
  filter: ListFilter,
  levels: [number, number][],
  offset: number,
  limit: number,
): { total: number; namespaces: (NamespaceRow & { access_level: number | null })[] } => {
  const where = ['n.kind = ?'];
  const args: unknown[] = [kind];
  if (!filter.admin) where.push("(n.visibility != 'private' OR eff.lvl IS NOT NULL)");
  if (filter.minAccessLevel !== undefined && !filter.admin) {
    where.push('eff.lvl >= ?');
    args.push(filter.minAccessLevel);
  }
  if (filter.membership) where.push('eff.lvl IS NOT NULL');
  if (filter.search) {
    where.push("(n.name LIKE ? ESCAPE '\\' OR n.path LIKE ? ESCAPE '\\')");
    const like = `%${filter.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    args.push(like, like);
  }
  // Every namespace the user reaches: their memberships (`levels`, from the index partitions) and
  // everything below them.
  const reach = `
    WITH RECURSIVE reach (id, lvl) AS (
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
      UNION ALL
      SELECT c.id, reach.lvl FROM namespaces c JOIN reach ON c.parent_id = reach.id
    ),
    eff (id, lvl) AS (SELECT id, MAX(lvl) FROM reach GROUP BY id)`;
  // When only what the user reaches can match (their memberships, or a level), the query starts
  // from those rows (CROSS JOIN fixes SQLite's join order), so it costs what the user reaches, not
  // every group or project of the deployment; otherwise it walks the namespaces by id.
  const joined = listsOnlyReached(filter) ? 'FROM eff CROSS JOIN namespaces n ON n.id = eff.id' : 'FROM namespaces n LEFT JOIN eff ON eff.id = n.id';
  const from = `${joined} LEFT JOIN namespaces p ON p.id = n.parent_id WHERE ${where.join(' AND ')}`;
  const reached = JSON.stringify(levels);
  const total = sql.exec<{ n: number }>(`${reach} SELECT COUNT(*) AS n ${from}`, reached, ...args).one().n;
  const rows = sql
    .exec<RawNamespace & { lvl: number | null }>(
      `${reach} SELECT ${ROW_COLUMNS},
              p.id AS p_id, p.name AS p_name, p.path AS p_path, p.kind AS p_kind, p.full_path AS p_full_path, p.parent_id AS p_parent_id,
              eff.lvl AS lvl
       ${from} ORDER BY n.id LIMIT ? OFFSET ?`,
      reached,
      ...args,
      limit,
      offset,
    )
    .toArray();
  return { total, namespaces: rows.map(({ lvl, ...r }) => ({ ...toNamespace(r), access_level: lvl })) };
};

/**
 * One member change into the membership index. Idempotent: it applies only when its version is
 * newer than the one recorded; then the owners' inbox follows (see inbox-index.ts).
 */
const applyMembershipChange = (sql: SqlStorage, namespaceId: number, c: MembershipChange, today: string): void => {
  const before = sql
    .exec<{ access_level: number }>('SELECT access_level FROM memberships WHERE user_id = ? AND namespace_id = ?', c.userId, namespaceId)
    .toArray()[0];
  const applied = sql
    .exec(
      `INSERT INTO memberships (user_id, namespace_id, access_level, created_at, created_by, expires_at, version) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id, namespace_id) DO UPDATE SET
         access_level = excluded.access_level, created_at = excluded.created_at, created_by = excluded.created_by,
         expires_at = excluded.expires_at, version = excluded.version
       WHERE excluded.version > memberships.version
       RETURNING user_id`,
      c.userId,
      namespaceId,
      c.accessLevel,
      c.createdAt,
      c.createdBy,
      c.expiresAt ?? null,
      c.version,
    )
    .toArray().length > 0;
  if (applied) membershipChanged(sql, c.userId, namespaceId, Math.max(before?.access_level ?? 0, c.accessLevel), today);
};

/** One pending-request change into the requester index; idempotent and forward-only, as members. */
const applyRequestChange = (sql: SqlStorage, namespace: NamespaceRow, c: RequestChange, today: string): void => {
  const applied = sql
    .exec(
      `INSERT INTO pending_requests (user_id, namespace_id, pending, version, requested_at, outcome, access_level, expires_at, decided_by, decided_at, details)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id, namespace_id) DO UPDATE SET
         pending = excluded.pending, version = excluded.version, requested_at = excluded.requested_at, outcome = excluded.outcome, details = excluded.details,
         access_level = excluded.access_level, expires_at = excluded.expires_at, decided_by = excluded.decided_by, decided_at = excluded.decided_at
       WHERE excluded.version > pending_requests.version
       RETURNING user_id`,
      c.userId,
      namespace.id,
      c.pending ? 1 : 0,
      c.version,
      c.requestedAt,
      c.outcome,
      c.grantedLevel,
      c.expiresAt,
      c.decidedBy,
      c.pending ? null : (c.decidedAt ?? isoNow()),
      c.details,
    )
    .toArray().length > 0;
  if (!applied) return;
  const chain = c.pending ? [namespace.id, ...ancestorIdsOf(sql, namespace.id)] : [];
  requestChanged(sql, namespace, chain, c.userId, c.pending ? c.requestedAt : null, today);
};

/**
 * A namespace object's outbox: member and pending-request changes, applied in the order they
 * happened there (by version). A push that arrives after the group or project was deleted has
 * nothing left to update.
 */
export const applyMembershipChanges = (sql: SqlStorage, namespaceId: number, members: MembershipChange[], requests: RequestChange[] = []): void => {
  const namespace = getById(sql, namespaceId);
  if (!namespace) return;
  const today = todayUtc();
  const changes = [
    ...members.map((c) => ({ version: c.version, apply: () => applyMembershipChange(sql, namespaceId, c, today) })),
    ...requests.map((c) => ({ version: c.version, apply: () => applyRequestChange(sql, namespace, c, today) })),
  ].sort((a, b) => a.version - b.version);
  for (const change of changes) change.apply();
};

/** The groups and projects where a user has a pending access request, by the requester index. */
export const pendingRequestsOf = (sql: SqlStorage, userId: number): { id: number; kind: 'group' | 'project' }[] =>
  sql
    .exec<{ id: number; kind: 'group' | 'project' }>(
      `SELECT n.id, n.kind FROM pending_requests r JOIN namespaces n ON n.id = r.namespace_id
       WHERE r.user_id = ? AND r.pending = 1 ORDER BY n.id`,
      userId,
    )
    .toArray();

/** The user's highest level in any of `namespaceIds` (a namespace's ancestors), from the index. */
const highestLevelIn = (sql: SqlStorage, userId: number, namespaceIds: number[]): number =>
  sql
    .exec<{ level: number | null }>(
      'SELECT MAX(access_level) AS level FROM memberships WHERE user_id = ? AND namespace_id IN (SELECT value FROM json_each(?))',
      userId,
      JSON.stringify(namespaceIds),
    )
    .one().level ?? 0;

/**
 * A requester's pending requests and those that ended in the last OUTCOME_DAYS (an approval with
 * an expiry: until OUTCOME_DAYS after it), oldest first. A private group or project shows only
 * while they can see it (a member, directly or inherited, or an administrator).
 */
export const visibleOwnRequests = (sql: SqlStorage, userId: number, admin: boolean, now: number): OwnRequestRow[] => {
  const since = new Date(now - OUTCOME_DAYS * 24 * 3600 * 1000).toISOString();
  return requestsOf(sql, userId, since, since.slice(0, 10)).filter(
    (r) => admin || r.visibility !== 'private' || highestLevelIn(sql, userId, [r.namespace_id, ...ancestorIdsOf(sql, r.namespace_id)]) > 0,
  );
};

/** A group or project by id, as the registry has it now. */
export const namespaceById = (sql: SqlStorage, kind: 'group' | 'project', id: number): NamespaceRow | null => {
  const row = getById(sql, id);
  return row && row.kind === kind ? row : null;
};

const visibilityRank = (v: Visibility) => VISIBILITIES.indexOf(v);

/** Ids of every group and project below `id`, nearest first. */
export const namespacesBelow = (sql: SqlStorage, id: number): number[] =>
  sql
    .exec<{ id: number }>(
      `WITH RECURSIVE down (id, depth) AS (
         SELECT id, 0 FROM namespaces WHERE parent_id = ?
         UNION ALL
         SELECT n.id, down.depth + 1 FROM namespaces n JOIN down ON n.parent_id = down.id WHERE down.depth < ?
       ) SELECT id FROM down ORDER BY depth, id`,
      id,
      MAX_DEPTH + 1,
    )
    .toArray()
    .map((r) => r.id);

/**
 * Changes a group's or project's settings in one transaction (GitLab's `Groups::UpdateService`,
 * `Projects::UpdateService`): a new path keeps the id, frees the old full path and moves the full
 * path (and full name) of everything below; visibility may not exceed the parent's, nor fall below
 * a child's. Returns the row and the snapshots of every row whose copy in an object is now old.
 */
export const updateNamespace = (
  sql: SqlStorage,
  kind: 'group' | 'project',
  id: number,
  changes: NamespaceChanges,
): Result<{ row: NamespaceRow; changed: { id: number; snapshot: NamespaceSnapshot }[] }> => {
  const row = namespaceById(sql, kind, id);
  if (!row) return fail(problems.notFound(kind === 'group' ? 'Group' : 'Project'));
  const visibility = changes.visibility ?? row.visibility;
  if (changes.visibility !== undefined && visibility !== row.visibility) {
    if (row.parent && row.parent.kind === 'group') {
      const parentVisibility = getById(sql, row.parent.id)!.visibility;
      if (visibilityRank(visibility) > visibilityRank(parentVisibility)) {
        return fail(problems.badRequest({ visibility_level: [`${visibility} is not allowed since the namespace has ${parentVisibility} visibility`] }));
      }
    }
    const higher = sql
      .exec<{ kind: string }>(
        `SELECT kind FROM namespaces WHERE parent_id = ? AND visibility IN (SELECT value FROM json_each(?)) ORDER BY kind LIMIT 1`,
        id,
        JSON.stringify(VISIBILITIES.filter((v) => visibilityRank(v) > visibilityRank(visibility))),
      )
      .toArray()[0];
    if (higher) {
      const why = higher.kind === 'group' ? 'there are sub-groups with higher visibility.' : 'this group contains projects with higher visibility.';
      return fail(problems.badRequest({ visibility_level: [`${visibility} is not allowed since ${why}`] }));
    }
  }
  const path = changes.path ?? row.path;
  const name = changes.name ?? row.name;
  const prefix = row.parent ? `${row.parent.full_path}/` : '';
  const fullPath = `${prefix}${path}`;
  const fullName = row.parent && row.full_name.endsWith(` / ${row.name}`) ? `${row.full_name.slice(0, -row.name.length)}${name}` : name;
  if (path !== row.path && !row.parent) {
    if (RESERVED_TOP_LEVEL.has(path.toLowerCase())) return fail(problems.badRequest({ path: [`${path} is a reserved name`] }));
    if (sql.exec('SELECT 1 FROM users WHERE username = ?', path).toArray()[0]) return fail(pathTaken());
  }
  try {
    sql.exec(
      `UPDATE namespaces SET name = ?, path = ?, full_path = ?, full_name = ?, description = ?, visibility = ?, request_access_enabled = ?,
         require_two_factor_authentication = ?, version = version + 1 WHERE id = ?`,
      name,
      path,
      fullPath,
      fullName,
      changes.description ?? row.description,
      visibility,
      (changes.request_access_enabled ?? row.request_access_enabled) ? 1 : 0,
      (changes.require_two_factor_authentication ?? row.require_two_factor_authentication) ? 1 : 0,
      id,
    );
  } catch (e) {
    if (isUniqueViolation(e)) return fail(pathTaken());
    throw e;
  }
  const changed = [id, ...moveBelow(sql, row, fullPath, fullName)];
  return ok({ row: getById(sql, id)!, changed: changed.map((cid) => ({ id: cid, snapshot: snapshotOf(getById(sql, cid)!) })) });
};

/**
 * After a namespace's full path or full name changed, everything below keeps its id and its own
 * path; the part of its full path (and full name) that was this one's changes with it, and its
 * version rises. Returns the ids moved.
 */
const moveBelow = (sql: SqlStorage, was: Pick<NamespaceRow, 'id' | 'full_path' | 'full_name'>, fullPath: string, fullName: string): number[] => {
  if (fullPath === was.full_path && fullName === was.full_name) return [];
  const below = namespacesBelow(sql, was.id);
  for (const child of below) {
    sql.exec(
      `UPDATE namespaces SET full_path = ? || substr(full_path, ?), full_name = ? || substr(full_name, ?), version = version + 1 WHERE id = ?`,
      fullPath,
      was.full_path.length + 1,
      fullName,
      was.full_name.length + 1,
      child,
    );
  }
  return below;
};

/**
 * A user's personal namespace is named by their username (and titled by their name): when either
 * changes, so do its path and the full paths and names of the projects in it (GitLab moves a
 * user's namespace with a username change). Returns the ids of those projects.
 */
export const renameUserNamespace = (sql: SqlStorage, oldUsername: string, username: string, name: string): number[] => {
  const row = sql.exec<RawNamespace>(`${SELECT_NAMESPACE} WHERE n.kind = 'user' AND n.full_path = ?`, oldUsername).toArray()[0];
  if (!row || (row.path === username && row.name === name)) return [];
  sql.exec('UPDATE namespaces SET name = ?, path = ?, full_path = ?, full_name = ?, version = version + 1 WHERE id = ?', name, username, username, name, row.id);
  return moveBelow(sql, row, username, name);
};

/**
 * Deletes a group or project from the registry; its full path is free at once (its object tells
 * its index partition). One with subgroups or projects is refused (400) until they are gone.
 */
export const deleteNamespace = (sql: SqlStorage, kind: 'group' | 'project', id: number): Result<null> => {
  if (!namespaceById(sql, kind, id)) return fail(problems.notFound(kind === 'group' ? 'Group' : 'Project'));
  if (sql.exec('SELECT 1 FROM namespaces WHERE parent_id = ? LIMIT 1', id).toArray()[0]) {
    return fail(problems.badRequest('Group has subgroups or projects; delete them first'));
  }
  sql.exec('DELETE FROM namespaces WHERE id = ?', id);
  return ok(null);
};

