import { DurableObject } from 'cloudflare:workers';
import { clock, epochSeconds, isoNow } from '../../clock';
import type { Env } from '../../env';
import { problems } from '../../errors';
import { accessTokenRecord, epochOf, putAccessToken, putRootRecord, revokeAccessTokens, rootRecord } from '../../store/tokens';
import type { EventDraft, UserRef } from '../../events/event';
import { settingsEvents } from '../../events/settings-events';
import { DIRECTORY_SCHEMA } from './schema';
import { indexPartition, userIndexPartitions, type RegistryLocators } from '../index-partition/index-partition';
import { partitionCount, partitionOfId, partitionOfName } from '../partitions';
import { migrate } from '../migrations';
import {
  createNamespace,
  deleteNamespace,
  ensureUserNamespace,
  listNamespaces,
  namespaceById,
  namespacesBelow,
  registryCopies,
  renameUserNamespace,
  resolveNamespace,
  snapshotOf,
  RESERVED_TOP_LEVEL,
  topLevelGroupExists,
  updateNamespace,
  type ListFilter,
  type NamespaceChanges,
  type NewNamespace,
  type RegistryCopy,
} from '../namespace-registry';
import { fail, ok, type Result } from '../result';
import type { Login, LoginChange } from '../sign-in/sign-in';
import { fanOut, isActive, type FanOut, type LiveToken } from './user-fanout';
import { deletionProblem, editProblem, transition, type StateAction, type UserState } from '../user-lifecycle';

export interface UserRow {
  id: number;
  username: string;
  name: string;
  email: string | null;
  admin: boolean;
  state: UserState;
  created_at: string;
  /** Rises with every change of the row; copies of the user keep the newest they were told. */
  version: number;
  /** The administrator behind ADMIN_TOKEN. */
  builtin: boolean;
}

/** A browser session as the pages find it in the user's `User` object: live, ended by a block or deactivation of its user, or none. */
/** A user who was deleted: final, so it outranks every version a live row could have had. */
export interface DeletedUser {
  id: number;
  state: 'deleted';
  version: number;
}
export const DELETED_VERSION = Number.MAX_SAFE_INTEGER;

/** What the Directory tells a copy of a user (the user's grant authority, token records). */
export type UserSnapshot = UserRow | DeletedUser;

/** `PUT /users/:id`: the fields given are changed. */
export interface UserChanges {
  username?: string;
  name?: string;
  email?: string;
  admin?: boolean;
  passwordHash?: string;
}

export interface ApplicationRow {
  id: number;
  client_id: string;
  secret_hash: string | null;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  confidential: boolean;
  created_at: string;
}

/** What a namespace's object must still correct after pushing its outbox (`applyMembershipChanges`). */
export interface IndexReply {
  /** Members whose users were deleted. */
  departed: number[];
  /** Pending requesters who are blocked, deactivated or deleted. */
  inactive: number[];
  /** Pending requesters' names now, with the users row's version. */
  requesters: { userId: number; username: string; name: string; version: number }[];
}

/** A personal access token or impersonation token, as listed (never the token itself). */
export interface AccessTokenRow {
  id: number;
  user_id: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  created_at: string;
  /** Epoch seconds. */
  expires_at: number;
  revoked: boolean;
  last_used_at: string | null;
}

/**
 * Which tokens a list shows (GitLab's personal access tokens finder): each field set narrows it.
 * Times are ISO 8601 UTC; `expiresBefore`/`expiresAfter` and `now` are epoch seconds.
 */
export interface AccessTokenFilter {
  userId?: number;
  impersonation?: boolean;
  /** `active`: neither revoked nor expired at `now`; `inactive`: either. */
  state?: 'active' | 'inactive';
  revoked?: boolean;
  /** Part of the name, without regard to case. */
  search?: string;
  createdBefore?: string;
  createdAfter?: string;
  lastUsedBefore?: string;
  lastUsedAfter?: string;
  expiresBefore?: number;
  expiresAfter?: number;
  now: number;
}

/** The SQL condition of a filter; GitLab's bounds: `<=`/`>=` for creation and use, strict for expiry. */
const accessTokenWhere = (f: AccessTokenFilter): { where: string; args: SqlStorageValue[] } => {
  const clauses: [string, SqlStorageValue | undefined][] = [
    ['user_id = ?', f.userId],
    ['impersonation = ?', f.impersonation === undefined ? undefined : Number(f.impersonation)],
    ['revoked = 0 AND expires_at > ?', f.state === 'active' ? f.now : undefined],
    ['(revoked = 1 OR expires_at <= ?)', f.state === 'inactive' ? f.now : undefined],
    ['revoked = ?', f.revoked === undefined ? undefined : Number(f.revoked)],
    ['instr(lower(name), lower(?)) > 0', f.search],
    ['created_at <= ?', f.createdBefore],
    ['created_at >= ?', f.createdAfter],
    ['last_used_at <= ?', f.lastUsedBefore],
    ['last_used_at >= ?', f.lastUsedAfter],
    ['expires_at < ?', f.expiresBefore],
    ['expires_at > ?', f.expiresAfter],
  ];
  const used = clauses.filter((c): c is [string, SqlStorageValue] => c[1] !== undefined);
  return { where: used.length ? used.map((c) => c[0]).join(' AND ') : '1', args: used.map((c) => c[1]) };
};

export interface NewAccessToken {
  userId: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  tokenHash: string;
  expiresAt: number;
}

export interface NewUser {
  username: string;
  name: string;
  email?: string | null;
  passwordHash?: string | null;
  admin?: boolean;
}

export interface NewApplication {
  clientId: string;
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  scopes: string[];
  confidential: boolean;
  ownerId: number;
}

const USER_COLUMNS = 'id, username, name, email, admin, state, created_at, version, builtin';
type RawUser = Omit<UserRow, 'admin' | 'builtin'> & { admin: number; builtin: number };
const toUser = (r: RawUser): UserRow => ({ ...r, admin: r.admin === 1, builtin: r.builtin === 1 });
const LOGIN_COLUMNS = `${USER_COLUMNS}, password_hash`;
type RawLogin = RawUser & { password_hash: string | null };
const toLogin = ({ password_hash, ...user }: RawLogin): Login => ({ user: toUser(user), passwordHash: password_hash });

/** How long before an unfinished fan-out of a user change is retried by the alarm. */
const FAN_OUT_RETRY_MS = 10_000;

type RawApplication = Omit<ApplicationRow, 'redirect_uris' | 'scopes' | 'confidential'> & {
  redirect_uris: string;
  scopes: string;
  confidential: number;
};
const toApplication = (r: RawApplication): ApplicationRow => ({
  id: r.id,
  client_id: r.client_id,
  secret_hash: r.secret_hash,
  name: r.name,
  redirect_uris: JSON.parse(r.redirect_uris),
  scopes: r.scopes.split(' ').filter(Boolean),
  confidential: r.confidential === 1,
  created_at: r.created_at,
});

const ACCESS_TOKEN_COLUMNS = 'id, user_id, name, scopes, impersonation, created_at, expires_at, revoked, last_used_at';
type RawAccessToken = Omit<AccessTokenRow, 'scopes' | 'impersonation' | 'revoked'> & { scopes: string; impersonation: number; revoked: number };
const toAccessToken = (r: RawAccessToken): AccessTokenRow => ({
  ...r,
  scopes: r.scopes.split(' ').filter(Boolean),
  impersonation: r.impersonation === 1,
  revoked: r.revoked === 1,
});

/** Registry rows per push to the index partitions, and how long before a failed push is retried. */
const REGISTRY_PUSH_BATCH = 200;
const REGISTRY_RETRY_MS = 10_000;

const isUniqueViolation = (e: unknown): boolean => e instanceof Error && /UNIQUE constraint failed/.test(e.message);

/** How long before settings events not yet in their namespace's log are handed over again. */
const EVENT_RELAY_RETRY_MS = 10_000;

/**
 * The directory: users (and the fan-out of their changes), OAuth applications, personal and
 * impersonation tokens, and the path registry of groups and projects. One instance (named
 * "directory"); SQLite makes every method here atomic.
 */
export class Directory extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, DIRECTORY_SCHEMA);
    // Registry rows still queued (a crash before their push) are pushed by the alarm.
    if (this.registryQueued()) {
      void ctx.blockConcurrencyWhile(async () => {
        if ((await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(clock.now());
      });
    }
  }

  // ---- settings ----

  /** The partition count this deployment recorded first (recording `count` if none was). */
  recordPartitionCount(count: number): number {
    const row = this.sql
      .exec<{ value: string }>(
        `INSERT INTO settings (name, value) VALUES ('partition_count', ?) ON CONFLICT (name) DO UPDATE SET value = value RETURNING value`,
        String(count),
      )
      .one();
    return Number(row.value);
  }

  // ---- the registry's copies in the index partitions ----

  /** The push of the registry outbox under way in this object, shared by every caller. */
  private publishing: Promise<boolean> | null = null;

  private registryQueued(): boolean {
    return this.sql.exec('SELECT 1 FROM registry_outbox LIMIT 1').toArray().length > 0;
  }

  /**
   * Pushes the registry rows queued so far (`registry_outbox`, written by triggers in the
   * transaction of every change of a row) to the index partitions of their trees, which keep
   * copies for the lists of groups and projects a user reaches; called before a change answers,
   * so those lists show it at once. A row changed meanwhile is queued again under a later number,
   * so nothing queued is dropped unpushed. False when a partition could not be reached: the alarm
   * retries, and until then the lists show the row as it was.
   */
  private async publishRegistry(): Promise<boolean> {
    const upTo = this.sql.exec<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM registry_outbox').one().seq;
    if (upTo === null) return true;
    while (this.sql.exec('SELECT 1 FROM registry_outbox WHERE seq <= ? LIMIT 1', upTo).toArray().length > 0) {
      this.publishing ??= this.pushRegistryBatch().finally(() => {
        this.publishing = null;
      });
      if (!(await this.publishing)) {
        const at = clock.now() + REGISTRY_RETRY_MS;
        const set = await this.ctx.storage.getAlarm();
        if (set === null || set > at) await this.ctx.storage.setAlarm(at);
        return false;
      }
    }
    return true;
  }

  /** The oldest queued registry rows, as they are now, to their partitions; false when one failed. */
  private async pushRegistryBatch(): Promise<boolean> {
    const queued = this.sql.exec<{ seq: number; namespace_id: number }>('SELECT seq, namespace_id FROM registry_outbox ORDER BY seq LIMIT ?', REGISTRY_PUSH_BATCH).toArray();
    if (queued.length === 0) return true;
    // A row deleted since it was queued has nothing to copy: its object tells its partition.
    // Each row goes to its tree's partition; where to find its tree, to the partition of its id
    // and (a top-level one) of its path.
    const count = partitionCount(this.env);
    const byPartition = new Map<number, { rows: RegistryCopy[]; locators: RegistryLocators }>();
    const to = (p: number) => {
      let entry = byPartition.get(p);
      if (!entry) byPartition.set(p, (entry = { rows: [], locators: { ids: [], tops: [] } }));
      return entry;
    };
    for (const row of registryCopies(this.sql, [...new Set(queued.map((q) => q.namespace_id))])) {
      to(partitionOfId(row.root_id, count)).rows.push(row);
      to(partitionOfId(row.id, count)).locators.ids.push([row.id, row.root_id]);
      if (row.parent_id === null) to(partitionOfName(row.path, count)).locators.tops.push([row.path, row.id]);
    }
    try {
      await Promise.all([...byPartition].map(([p, { rows, locators }]) => indexPartition(this.env, p).applyRegistryRows(rows, locators)));
    } catch (e) {
      console.warn('registry rows could not be copied to their index partitions; the alarm will retry', e);
      return false;
    }
    this.sql.exec('DELETE FROM registry_outbox WHERE seq <= ?', queued[queued.length - 1].seq);
    return true;
  }

  // ---- users ----

  /**
   * A new user: the row, and in the same transaction an outbox row whose fan-out copies the login
   * record to the name's partition before this answers (so the user can sign in at once).
   * Usernames are decided here, in one table shared with top-level groups' paths (see
   * docs/decisions.md, "Usernames decided in one place").
   */
  async createUser(input: NewUser): Promise<Result<UserRow>> {
    const result = this.ctx.storage.transactionSync(() => this.insertUser(input));
    if (!result.ok) return result;
    const done = await this.settleFanOut(result.value.id);
    return done.ok ? ok(this.getUser(result.value.id) ?? result.value) : done;
  }

  private insertUser(input: NewUser): Result<UserRow> {
    // A username is also a top-level namespace path, shared with groups (as in GitLab).
    if (RESERVED_TOP_LEVEL.has(input.username.toLowerCase()) || topLevelGroupExists(this.sql, input.username)) {
      return fail(problems.conflict('Username has already been taken'));
    }
    try {
      const row = this.sql
        .exec<RawUser>(
          `INSERT INTO users (username, name, email, password_hash, admin, created_at)
           VALUES (?, ?, ?, ?, ?, ?) RETURNING ${USER_COLUMNS}`,
          input.username,
          input.name,
          input.email ?? null,
          input.passwordHash ?? null,
          input.admin ? 1 : 0,
          isoNow(),
        )
        .one();
      this.queueFanOut(row.id, row.version, []);
      return ok(toUser(row));
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const field = /users\.email/.test(String(e)) ? 'email' : 'username';
      return fail(problems.conflict(field === 'email' ? 'Email has already been taken' : 'Username has already been taken'));
    }
  }

  /**
   * The built-in administrator behind ADMIN_TOKEN (`root` unless that name is taken, or it was
   * renamed), created on first use; its caller record goes to KV, where the API reads it.
   */
  async ensureRoot(): Promise<UserRow> {
    const builtin = () => this.sql.exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users WHERE builtin = 1`).toArray()[0];
    let found = builtin();
    for (let n = 0; !found; n++) {
      this.sql.exec(
        `INSERT INTO users (username, name, admin, builtin, created_at) VALUES (?, 'Administrator', 1, 1, ?) ON CONFLICT (username) DO NOTHING`,
        n === 0 ? 'root' : `root${n}`,
        isoNow(),
      );
      found = builtin();
    }
    const root = toUser(found);
    return this.serial(root.id, async () => {
      const current = this.getUser(root.id) ?? root;
      await putRootRecord(this.env, rootRecord(current));
      return current;
    });
  }

  getUser(id: number): UserRow | null {
    const row = this.sql.exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`, id).toArray()[0];
    return row ? toUser(row) : null;
  }

  getUsers(ids: number[]): UserRow[] {
    if (ids.length === 0) return [];
    return this.sql
      .exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(ids))
      .toArray()
      .map(toUser);
  }

  findUserByUsername(username: string): UserRow | null {
    const row = this.sql.exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users WHERE username = ?`, username).toArray()[0];
    return row ? toUser(row) : null;
  }

  /** A user's login record (the row and its password hash), as the fan-out copies it to the name's partition. */
  private loginOf(username: string): Login | null {
    const row = this.sql.exec<RawLogin>(`SELECT ${LOGIN_COLUMNS} FROM users WHERE username = ?`, username).toArray()[0];
    return row ? toLogin(row) : null;
  }

  /**
   * `search` is GitLab's `User.search`: a part of the name or username (a leading `@` ignored),
   * or, for an administrator's search (`withPrivateEmails`), the whole email address in any case;
   * never a part of one, so no caller can spell out an address letter by letter. Knock keeps no
   * public email, which GitLab also matches whole for everyone.
   */
  listUsers(
    filter: { username?: string; search?: string; withPrivateEmails?: boolean; state?: UserState },
    offset: number,
    limit: number,
  ): { total: number; users: UserRow[] } {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.state !== undefined) {
      where.push('state = ?');
      args.push(filter.state);
    }
    if (filter.username !== undefined) {
      where.push('username = ?');
      args.push(filter.username);
    }
    if (filter.search) {
      const query = filter.search.replace(/^@/, '');
      const like = `%${query.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      const byEmail = filter.withPrivateEmails ? ' OR lower(email) = lower(?)' : '';
      // A lone `@` finds nobody, as in GitLab.
      where.push(query ? `(username LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\'${byEmail})` : '0');
      if (query) args.push(like, like, ...(filter.withPrivateEmails ? [query] : []));
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM users ${clause}`, ...args).one().n;
    const users = this.sql
      .exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users ${clause} ORDER BY id LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toUser);
    return { total, users };
  }

  // ---- changing users: the row first, with an outbox row; then the fan-out (user-fanout.ts) ----

  /** `PUT /users/:id` (GitLab's `Users::UpdateService`): a taken username or email is 409. */
  async updateUser(id: number, changes: UserChanges): Promise<Result<UserRow>> {
    const result = this.ctx.storage.transactionSync((): Result<UserRow> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const problem = editProblem(user, changes);
      if (problem) return fail(problem);
      const username = changes.username ?? user.username;
      if (username.toLowerCase() !== user.username.toLowerCase() && (RESERVED_TOP_LEVEL.has(username.toLowerCase()) || topLevelGroupExists(this.sql, username))) {
        return fail(problems.conflict('Username has already been taken'));
      }
      let updated: UserRow;
      try {
        updated = toUser(
          this.sql
            .exec<RawUser>(
              `UPDATE users SET username = ?, name = ?, email = ?, admin = ?, password_hash = COALESCE(?, password_hash), version = version + 1
               WHERE id = ? RETURNING ${USER_COLUMNS}`,
              username,
              changes.name ?? user.name,
              changes.email ?? user.email,
              (changes.admin ?? user.admin) ? 1 : 0,
              changes.passwordHash ?? null,
              id,
            )
            .one(),
        );
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        return fail(problems.conflict(/users\.email/.test(String(e)) ? 'Email has already been taken' : 'Username has already been taken'));
      }
      // The personal namespace is the username: its path, and its projects' full paths, follow.
      renameUserNamespace(this.sql, user.username, updated.username, updated.name);
      // A new password ends the user's browser sessions (in their `User` object) through the fan-out.
      const formerNames = updated.username.toLowerCase() === user.username.toLowerCase() ? [] : [user.username];
      this.queueFanOut(id, updated.version, [], changes.passwordHash !== undefined, formerNames);
      return ok(updated);
    });
    if (!result.ok) return result;
    // A new username or name moved the personal namespace and its projects.
    await this.publishRegistry();
    const done = await this.settleFanOut(id);
    return done.ok ? ok(this.getUser(id) ?? result.value) : done;
  }

  /**
   * `POST /users/:id/block`, `/unblock`, `/deactivate`, `/activate`, by GitLab's rules
   * (user-lifecycle.ts). The user's browser sessions, tokens, grants and pending requests follow
   * in the fan-out before this returns.
   */
  async changeUserState(id: number, action: StateAction, actorId: number): Promise<Result<{ user: UserRow; answer: boolean | null }>> {
    const result = this.commitStateChange(id, action, actorId);
    if (!result.ok) return result;
    const done = await this.settleFanOut(id);
    return done.ok ? result : done;
  }

  /** The transaction of `changeUserState`: the row, and the outbox row with its alarm. */
  private commitStateChange(id: number, action: StateAction, actorId: number): Result<{ user: UserRow; answer: boolean | null }> {
    return this.ctx.storage.transactionSync((): Result<{ user: UserRow; answer: boolean | null }> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const t = transition(action, user, actorId);
      if ('problem' in t) return fail(t.problem);
      if (t.next === user.state) return ok({ user, answer: t.answer });
      const updated = toUser(this.sql.exec<RawUser>(`UPDATE users SET state = ?, version = version + 1 WHERE id = ? RETURNING ${USER_COLUMNS}`, t.next, id).one());
      this.queueFanOut(id, updated.version, []);
      return ok({ user: updated, answer: t.answer });
    });
  }

  /**
   * `DELETE /users/:id`. In one transaction: the users row and the user's personal projects
   * (registry rows), refused while the user is a group's only Owner. The fan-out then ends their
   * sessions, tokens and grants and removes their memberships and pending requests.
   */
  async deleteUser(id: number): Promise<Result<null>> {
    // Groups of which the user is the only direct Owner (GitLab's `solo_owned_groups`), by the index partitions.
    const soleOwned = (await Promise.all((await userIndexPartitions(this.env, id)).map((p) => p.soleOwnedGroups(id)))).flat();
    const result = this.ctx.storage.transactionSync((): Result<null> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const problem = deletionProblem(user, soleOwned);
      if (problem) return fail(problem);
      const personal = this.personalNamespace(user.username);
      const gone = personal === null ? [] : namespacesBelow(this.sql, personal);
      for (const projectId of gone) deleteNamespace(this.sql, 'project', projectId);
      if (personal !== null) this.sql.exec('DELETE FROM namespaces WHERE id = ?', personal);
      this.sql.exec('DELETE FROM users WHERE id = ?', id);
      this.queueFanOut(id, user.version + 1, gone, false, [user.username]);
      return ok(null);
    });
    if (!result.ok) return result;
    return this.settleFanOut(id);
  }

  /** A user as copies of it must see it: the row, or that the user was deleted. */
  userSnapshot(id: number): UserSnapshot {
    return this.getUser(id) ?? { id, state: 'deleted', version: DELETED_VERSION };
  }

  /**
   * One alarm, three kinds of unfinished work: user fan-outs that did not finish (the Worker or an
   * object they called went away), settings events not yet handed to their namespaces, and registry
   * rows not yet copied to their index partitions. Each pass runs all three; the alarm is set again
   * while any has work left.
   */
  async alarm(): Promise<void> {
    const [fanOutsLeft, eventsLeft, registryPushed] = await Promise.all([this.retryFanOuts(), this.relayNamespaceEvents(), this.publishRegistry()]);
    const delays = [fanOutsLeft ? FAN_OUT_RETRY_MS : null, eventsLeft ? EVENT_RELAY_RETRY_MS : null, registryPushed ? null : REGISTRY_RETRY_MS].filter(
      (d): d is number => d !== null,
    );
    if (delays.length > 0) await this.ctx.storage.setAlarm(clock.now() + Math.min(...delays));
  }

  /** Runs the fan-outs still waiting; true while some are left. */
  private async retryFanOuts(): Promise<boolean> {
    const waiting = this.sql.exec<{ user_id: number }>('SELECT user_id FROM user_changes').toArray();
    const results = await Promise.allSettled(waiting.map((w) => this.propagate(w.user_id)));
    for (const r of results) if (r.status === 'rejected') console.warn('user fan-out failed; the alarm will retry', r.reason);
    return this.sql.exec('SELECT 1 FROM user_changes LIMIT 1').toArray().length > 0;
  }

  /**
   * Records that user `id` changed (version `version`) and must be fanned out. Called inside the
   * transaction that changes the row; the alarm is set in the same synchronous turn, so it is
   * stored with the change (Durable Object writes without an intervening await commit together).
   */
  private queueFanOut(id: number, version: number, deletedNamespaces: number[], endSessions = false, formerNames: string[] = []): void {
    this.sql.exec(
      `INSERT INTO user_changes (user_id, version, deleted_namespaces, end_sessions, former_names) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET version = excluded.version,
         end_sessions = MAX(user_changes.end_sessions, excluded.end_sessions),
         deleted_namespaces = (SELECT json_group_array(value) FROM (
           SELECT value FROM json_each(user_changes.deleted_namespaces) UNION SELECT value FROM json_each(excluded.deleted_namespaces))),
         former_names = (SELECT json_group_array(value) FROM (
           SELECT value FROM json_each(user_changes.former_names) UNION SELECT value FROM json_each(excluded.former_names)))`,
      id,
      version,
      JSON.stringify(deletedNamespaces),
      Number(endSessions),
      JSON.stringify(formerNames),
    );
    void this.ctx.storage.setAlarm(clock.now() + FAN_OUT_RETRY_MS);
  }

  /** Runs the fan-out now; when it fails, the change stands and the alarm finishes it (503 meanwhile). */
  private async settleFanOut(id: number): Promise<Result<null>> {
    try {
      await this.propagate(id);
      return ok(null);
    } catch (e) {
      console.warn('user fan-out failed; the alarm will retry', id, e);
      return fail(problems.unavailable('The change is saved; bringing the user\'s sign-in, sessions and tokens up to date is being retried'));
    }
  }

  /**
   * Brings every copy of user `id` up to its row, until no change is waiting. One run at a time per
   * user (see `serial`), each from what the tables say when it starts, so the last run is the newest.
   */
  private propagate(id: number): Promise<void> {
    return this.serial(id, async () => {
      for (;;) {
        const change = this.sql
          .exec<{ version: number; deleted_namespaces: string; end_sessions: number; former_names: string }>(
            'SELECT version, deleted_namespaces, end_sessions, former_names FROM user_changes WHERE user_id = ?',
            id,
          )
          .toArray()[0];
        if (!change) return;
        const plan = this.fanOutPlan(id, JSON.parse(change.deleted_namespaces) as number[], change.end_sessions === 1, JSON.parse(change.former_names) as string[]);
        await fanOut(this.env, plan);
        this.ctx.storage.transactionSync(() => {
          if (!isActive(plan.snapshot)) this.markRevoked(plan.tokens);
          this.sql.exec('DELETE FROM user_changes WHERE user_id = ? AND version = ?', id, change.version);
        });
      }
    });
  }

  /** What the fan-out of user `id` must reach, read from the tables as they are now. */
  private fanOutPlan(id: number, deletedNamespaces: number[], endSessions: boolean, formerNames: string[]): FanOut {
    const snapshot = this.userSnapshot(id);
    const personal = isActive(snapshot) ? this.personalNamespace(snapshot.username) : null;
    return {
      snapshot,
      logins: this.loginChanges(snapshot, formerNames),
      tokens: this.liveTokensOf(id),
      deletedNamespaces,
      endSessions,
      personalProjects:
        personal === null
          ? []
          : namespacesBelow(this.sql, personal).flatMap((pid) => {
              const row = namespaceById(this.sql, 'project', pid);
              return row ? [{ id: pid, snapshot: snapshotOf(row) }] : [];
            }),
    };
  }

  /**
   * What the `name:` partitions must be told: the partition of the username gets the login record
   * (unless the user was deleted); the partition of each name the user had before (renamed or
   * deleted since the last fan-out finished) that is not the same one, that the name is gone.
   */
  private loginChanges(snapshot: UserSnapshot, formerNames: string[]): FanOut['logins'] {
    const count = partitionCount(this.env);
    const login = snapshot.state === 'deleted' ? null : this.loginOf(snapshot.username);
    const current = login ? partitionOfName(login.user.username, count) : null;
    const changes = new Map<number, LoginChange>();
    if (current !== null) changes.set(current, { userId: snapshot.id, version: snapshot.version, login });
    for (const name of formerNames) {
      const p = partitionOfName(name, count);
      if (!changes.has(p)) changes.set(p, { userId: snapshot.id, version: snapshot.version, login: null });
    }
    return [...changes].map(([partition, change]) => ({ partition, change }));
  }

  private personalNamespace(username: string): number | null {
    return this.sql.exec<{ id: number }>("SELECT id FROM namespaces WHERE kind = 'user' AND full_path = ?", username).toArray()[0]?.id ?? null;
  }

  /**
   * Runs `task` after every earlier task of the same user has finished. What writes a user's
   * records to KV (issuing, revoking, the fan-out) goes through here, so no older write lands
   * after a newer one. In memory: a restarted object has no earlier task still running.
   */
  private readonly queues = new Map<number, Promise<unknown>>();

  private serial<T>(userId: number, task: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(userId) ?? Promise.resolve()).then(task, task);
    const tail = run.catch(() => undefined);
    this.queues.set(userId, tail);
    void tail.then(() => {
      if (this.queues.get(userId) === tail) this.queues.delete(userId);
    });
    return run;
  }

  // ---- groups and projects: the path registry (see namespace-registry.ts) ----

  async createNamespace(input: NewNamespace) {
    const created = this.ctx.storage.transactionSync(() => createNamespace(this.sql, input));
    await this.publishRegistry();
    return created;
  }

  async ensureUserNamespace(user: { username: string; name: string }) {
    const found = ensureUserNamespace(this.sql, user);
    await this.publishRegistry();
    return found;
  }

  resolveNamespace(kind: 'group' | 'project', ref: number | string) {
    return resolveNamespace(this.sql, kind, ref);
  }

  listNamespaces(kind: 'group' | 'project', filter: ListFilter, levels: [number, number][], offset: number, limit: number) {
    return listNamespaces(this.sql, kind, filter, levels, offset, limit);
  }

  /** A group or project as the registry has it now (its settings and full path change). */
  getNamespace(kind: 'group' | 'project', id: number) {
    return namespaceById(this.sql, kind, id);
  }

  /**
   * Changes a group's or project's settings and, in the same transaction, records an audit event
   * per changed attribute (`events`), kept here until the namespace's object has them
   * (`ackNamespaceEvents`); the alarm hands over any the caller could not.
   */
  async updateNamespace(kind: 'group' | 'project', id: number, changes: NamespaceChanges, author: UserRef | null = null) {
    const updated = this.ctx.storage.transactionSync(() => {
      const before = namespaceById(this.sql, kind, id);
      const result = updateNamespace(this.sql, kind, id, changes);
      if (!result.ok) return result;
      const events = before ? settingsEvents(before, result.value.row, author) : [];
      for (const e of events) this.sql.exec('INSERT INTO namespace_events (uuid, namespace_id, record) VALUES (?, ?, ?)', e.uuid, id, JSON.stringify(e));
      if (events.length > 0) void this.ctx.storage.setAlarm(clock.now() + EVENT_RELAY_RETRY_MS);
      return ok({ ...result.value, events });
    });
    await this.publishRegistry();
    return updated;
  }

  /** The namespace's object has these events now. */
  ackNamespaceEvents(uuids: string[]): void {
    this.sql.exec('DELETE FROM namespace_events WHERE uuid IN (SELECT value FROM json_each(?))', JSON.stringify(uuids));
  }

  /** Hands settings events over to their namespaces' objects when the caller could not; true while some are left. */
  private async relayNamespaceEvents(): Promise<boolean> {
    const rows = this.sql.exec<{ namespace_id: number; record: string }>('SELECT namespace_id, record FROM namespace_events ORDER BY rowid LIMIT 500').toArray();
    const byNamespace = new Map<number, EventDraft[]>();
    for (const r of rows) byNamespace.set(r.namespace_id, [...(byNamespace.get(r.namespace_id) ?? []), JSON.parse(r.record) as EventDraft]);
    for (const [namespaceId, records] of byNamespace) {
      try {
        await this.env.NAMESPACES.getByName(String(namespaceId)).recordEvents(records);
        this.ackNamespaceEvents(records.map((e) => e.uuid));
      } catch (e) {
        console.warn('settings events could not be handed to their namespace; the alarm will retry', namespaceId, e);
      }
    }
    return this.sql.exec('SELECT 1 FROM namespace_events LIMIT 1').toArray().length > 0;
  }

  deleteNamespace(kind: 'group' | 'project', id: number) {
    return this.ctx.storage.transactionSync(() => deleteNamespace(this.sql, kind, id));
  }

  // ---- personal access tokens and impersonation tokens ----

  /**
   * A new personal or impersonation token of an active user: listed here, then its record (with
   * the user's profile as it is now) written to KV, in the user's queue, so a block or an edit
   * that commits meanwhile is fanned out after this write, never before it.
   */
  issueAccessToken(input: NewAccessToken): Promise<Result<AccessTokenRow>> {
    return this.serial(input.userId, async () => {
      const user = this.getUser(input.userId);
      if (!user || user.state !== 'active') return fail(problems.notFound('User'));
      const row = toAccessToken(
        this.sql
          .exec<RawAccessToken>(
            `INSERT INTO access_tokens (user_id, name, scopes, impersonation, token_hash, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${ACCESS_TOKEN_COLUMNS}`,
            input.userId,
            input.name,
            input.scopes.join(' '),
            input.impersonation ? 1 : 0,
            input.tokenHash,
            isoNow(),
            input.expiresAt,
          )
          .one(),
      );
      const token = { scopes: row.scopes, clientId: null, grantId: null, tokenId: row.id, createdAt: epochOf(row.created_at), expiresAt: row.expires_at };
      await putAccessToken(this.env, input.tokenHash, accessTokenRecord(user, token));
      return ok(row);
    });
  }

  /** Tokens that pass a filter, newest first. */
  listAccessTokens(filter: AccessTokenFilter, offset: number, limit: number): { total: number; tokens: AccessTokenRow[] } {
    const { where, args } = accessTokenWhere(filter);
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM access_tokens WHERE ${where}`, ...args).one().n;
    const tokens = this.sql
      .exec<RawAccessToken>(`SELECT ${ACCESS_TOKEN_COLUMNS} FROM access_tokens WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toAccessToken);
    return { total, tokens };
  }

  /** One token with the keyed hash that names it in KV, so revoking can end it there. */
  getAccessToken(id: number): (AccessTokenRow & { token_hash: string }) | null {
    const row = this.sql.exec<RawAccessToken & { token_hash: string }>(`SELECT ${ACCESS_TOKEN_COLUMNS}, token_hash FROM access_tokens WHERE id = ?`, id).toArray()[0];
    return row ? { ...toAccessToken(row), token_hash: row.token_hash } : null;
  }

  /** Records that a token was used at `at` (ISO 8601), unless a use at or after `since` is already recorded. */
  touchAccessToken(id: number, at: string, since: string): void {
    this.sql.exec('UPDATE access_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', at, id, since);
  }

  /**
   * Ends one token at once: KV gets its tombstone first, then the row is marked revoked, so a
   * failure in between leaves it listed as active (a retry revokes it), never usable. False when
   * it was revoked already.
   */
  revokeAccessToken(id: number): Promise<boolean> {
    const token = this.getAccessToken(id);
    if (!token) return Promise.resolve(false);
    return this.serial(token.user_id, async () => {
      const live = this.liveTokensOf(token.user_id).filter((t) => t.id === id);
      await revokeAccessTokens(this.env, live.map((t) => ({ hash: t.token_hash, expiresAt: t.expires_at })));
      return this.markRevoked([token]) > 0;
    });
  }

  /**
   * Ends every personal and impersonation token of a user (tombstones in KV, then the rows marked
   * revoked); the fan-out of a block, deactivation or deletion does the same. Returns how many.
   */
  revokeAllAccessTokensOf(userId: number): Promise<number> {
    return this.serial(userId, async () => {
      const live = this.liveTokensOf(userId);
      await revokeAccessTokens(this.env, live.map((t) => ({ hash: t.token_hash, expiresAt: t.expires_at })));
      return this.markRevoked(live);
    });
  }

  /** A user's tokens that KV may still accept: not revoked, not expired. */
  private liveTokensOf(userId: number): LiveToken[] {
    return this.sql
      .exec<{ id: number; token_hash: string; scopes: string; created_at: string; expires_at: number }>(
        'SELECT id, token_hash, scopes, created_at, expires_at FROM access_tokens WHERE user_id = ? AND revoked = 0 AND expires_at > ?',
        userId,
        epochSeconds(),
      )
      .toArray()
      .map((t) => ({ ...t, scopes: t.scopes.split(' ').filter(Boolean) }));
  }

  private markRevoked(tokens: { id: number }[]): number {
    if (tokens.length === 0) return 0;
    return this.sql.exec('UPDATE access_tokens SET revoked = 1 WHERE revoked = 0 AND id IN (SELECT value FROM json_each(?)) RETURNING id', JSON.stringify(tokens.map((t) => t.id))).toArray().length;
  }

  // ---- OAuth applications ----

  createApplication(input: NewApplication): ApplicationRow {
    const row = this.sql
      .exec<RawApplication>(
        `INSERT INTO applications (client_id, secret_hash, name, redirect_uris, scopes, confidential, owner_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        input.clientId,
        input.secretHash,
        input.name,
        JSON.stringify(input.redirectUris),
        input.scopes.join(' '),
        input.confidential ? 1 : 0,
        input.ownerId,
        isoNow(),
      )
      .one();
    return toApplication(row);
  }

  listApplications(): ApplicationRow[] {
    return this.sql.exec<RawApplication>('SELECT * FROM applications ORDER BY id').toArray().map(toApplication);
  }

  getApplicationByClientId(clientId: string): ApplicationRow | null {
    const row = this.sql.exec<RawApplication>('SELECT * FROM applications WHERE client_id = ?', clientId).toArray()[0];
    return row ? toApplication(row) : null;
  }

  applicationClientId(id: number): string | null {
    return this.sql.exec<{ client_id: string }>('SELECT client_id FROM applications WHERE id = ?', id).toArray()[0]?.client_id ?? null;
  }

  /** Deletes an application; returns its client id so the caller can end its grants. */
  deleteApplication(id: number): string | null {
    const row = this.sql.exec<{ client_id: string }>('DELETE FROM applications WHERE id = ? RETURNING client_id', id).toArray()[0];
    return row?.client_id ?? null;
  }
}

/** The single Directory instance. */
export const directory = (env: Env) => env.DIRECTORY.getByName('directory');
