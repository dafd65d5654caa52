import { DurableObject } from 'cloudflare:workers';
import { clock, isoNow, todayUtc } from '../clock';
import type { Env } from '../env';
import { problems } from '../errors';
import { directoryMigrations } from './directory-schema';
import { inboxPage, inboxVersion, OUTCOME_DAYS, requesterRenamed, requestsOf, type InboxFilter, type InboxPage, type InboxReader, type OwnRequestRow } from './inbox-index';
import { migrate } from './migrations';
import {
  ancestorIdsOf,
  applyMembershipChanges,
  createNamespace,
  deleteNamespace,
  ensureUserNamespace,
  highestLevelIn,
  listEffectiveMembers,
  listNamespaces,
  membershipOf,
  namespaceById,
  pendingRequestsOf,
  resolveNamespace,
  RESERVED_TOP_LEVEL,
  topLevelGroupExists,
  updateNamespace,
  type ListFilter,
  type MembershipChange,
  type NamespaceChanges,
  type NewNamespace,
  type RequestChange,
} from './namespace-registry';
import { fail, ok, type Result } from './result';

export interface UserRow {
  id: number;
  username: string;
  name: string;
  email: string | null;
  admin: boolean;
  state: string;
  created_at: string;
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
}

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

/** Failed sign-ins allowed per username and per client address within the window. */
export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

const USER_COLUMNS = 'id, username, name, email, admin, state, created_at';
type RawUser = Omit<UserRow, 'admin'> & { admin: number };
const toUser = (r: RawUser): UserRow => ({ ...r, admin: r.admin === 1 });

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

const ACCESS_TOKEN_COLUMNS = 'id, user_id, name, scopes, impersonation, created_at, expires_at, revoked';
type RawAccessToken = Omit<AccessTokenRow, 'scopes' | 'impersonation' | 'revoked'> & { scopes: string; impersonation: number; revoked: number };
const toAccessToken = (r: RawAccessToken): AccessTokenRow => ({
  ...r,
  scopes: r.scopes.split(' ').filter(Boolean),
  impersonation: r.impersonation === 1,
  revoked: r.revoked === 1,
});

const isUniqueViolation = (e: unknown): boolean => e instanceof Error && /UNIQUE constraint failed/.test(e.message);

/**
 * The directory: users, OAuth applications, browser sessions and sign-in throttling. One
 * instance (named "directory"); SQLite makes every method here atomic.
 */
export class Directory extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, directoryMigrations);
  }

  // ---- users ----

  createUser(input: NewUser): Result<UserRow> {
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
      return ok(toUser(row));
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const field = /users\.email/.test(String(e)) ? 'email' : 'username';
      return fail(problems.conflict(field === 'email' ? 'Email has already been taken' : 'Username has already been taken'));
    }
  }

  /** The built-in administrator `root`, created on first use. */
  ensureRoot(): UserRow {
    this.sql.exec(
      `INSERT INTO users (username, name, admin, created_at) VALUES ('root', 'Administrator', 1, ?)
       ON CONFLICT (username) DO NOTHING`,
      isoNow(),
    );
    return toUser(this.sql.exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users WHERE username = 'root'`).one());
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

  listUsers(filter: { username?: string; search?: string }, offset: number, limit: number): { total: number; users: UserRow[] } {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.username !== undefined) {
      where.push('username = ?');
      args.push(filter.username);
    }
    if (filter.search) {
      where.push("(username LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\')");
      const like = `%${filter.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      args.push(like, like, like);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM users ${clause}`, ...args).one().n;
    const users = this.sql
      .exec<RawUser>(`SELECT ${USER_COLUMNS} FROM users ${clause} ORDER BY id LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toUser);
    return { total, users };
  }

  // ---- sign-in ----

  /**
   * First half of a sign-in: refuses throttled attempts, else returns the password hash to
   * verify in the Worker (PBKDF2 is slow; it must not block this single object).
   */
  beginSignIn(username: string, clientAddress: string): { retryAfter: number } | { user: UserRow | null; passwordHash: string | null } {
    const now = clock.now();
    this.sql.exec('DELETE FROM login_failures WHERE at <= ?', now - LOGIN_WINDOW_MS);
    let retryAfter = 0;
    for (const key of [`user:${username.toLowerCase()}`, `ip:${clientAddress}`]) {
      const rows = this.sql
        .exec<{ n: number; first: number | null }>('SELECT COUNT(*) AS n, MIN(at) AS first FROM login_failures WHERE key = ?', key)
        .one();
      if (rows.n >= LOGIN_FAILURE_LIMIT && rows.first !== null) {
        retryAfter = Math.max(retryAfter, Math.ceil((rows.first + LOGIN_WINDOW_MS - now) / 1000));
      }
    }
    if (retryAfter > 0) return { retryAfter };
    // Count the attempt against the username now, while the password is checked outside this
    // object: otherwise simultaneous guesses at one account would all pass the check above before
    // any failure is recorded. (Not against the address: many people may sign in at once from one.)
    this.sql.exec('INSERT INTO login_failures (key, at) VALUES (?, ?)', `user:${username.toLowerCase()}`, now);
    const row = this.sql
      .exec<RawUser & { password_hash: string | null }>(`SELECT ${USER_COLUMNS}, password_hash FROM users WHERE username = ?`, username)
      .toArray()[0];
    if (!row) return { user: null, passwordHash: null };
    const { password_hash, ...user } = row;
    return { user: toUser(user), passwordHash: password_hash };
  }

  /** Second half: a success clears the username's failures; a failure is counted for the address too. */
  recordSignIn(username: string, clientAddress: string, succeeded: boolean): void {
    if (succeeded) {
      this.sql.exec('DELETE FROM login_failures WHERE key = ?', `user:${username.toLowerCase()}`);
      return;
    }
    this.sql.exec('INSERT INTO login_failures (key, at) VALUES (?, ?)', `ip:${clientAddress}`, clock.now());
  }

  // ---- browser sessions ----

  createSession(idHash: string, userId: number, csrfToken: string, ttlSeconds: number): void {
    const now = clock.now();
    this.sql.exec('DELETE FROM sessions WHERE expires_at <= ?', now);
    this.sql.exec(
      'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      idHash,
      userId,
      csrfToken,
      new Date(now).toISOString(),
      now + ttlSeconds * 1000,
    );
  }

  getSession(idHash: string): { user: UserRow; csrfToken: string } | null {
    const row = this.sql
      .exec<{ user_id: number; csrf_token: string; expires_at: number }>(
        'SELECT user_id, csrf_token, expires_at FROM sessions WHERE id_hash = ?',
        idHash,
      )
      .toArray()[0];
    if (!row || row.expires_at <= clock.now()) return null;
    const user = this.getUser(row.user_id);
    if (!user || user.state !== 'active') return null;
    return { user, csrfToken: row.csrf_token };
  }

  deleteSession(idHash: string): void {
    this.sql.exec('DELETE FROM sessions WHERE id_hash = ?', idHash);
  }

  // ---- groups and projects: path registry and membership index (see namespace-registry.ts) ----

  createNamespace(input: NewNamespace) {
    return this.ctx.storage.transactionSync(() => createNamespace(this.sql, input));
  }

  ensureUserNamespace(user: { username: string; name: string }) {
    return ensureUserNamespace(this.sql, user);
  }

  resolveNamespace(kind: 'group' | 'project', ref: number | string, userId: number) {
    return resolveNamespace(this.sql, kind, ref, userId);
  }

  /** A user's level inherited from these ancestor groups (asked by a namespace's object when needed). */
  inheritedLevel(userId: number, ancestorIds: number[]): number {
    return highestLevelIn(this.sql, userId, ancestorIds);
  }

  listNamespaces(kind: 'group' | 'project', filter: ListFilter, offset: number, limit: number) {
    return listNamespaces(this.sql, kind, filter, offset, limit);
  }

  /** Called by a namespace's Durable Object with the member (and pending-request) changes of its outbox. */
  applyMembershipChanges(namespaceId: number, changes: MembershipChange[], requests: RequestChange[] = []): void {
    this.ctx.storage.transactionSync(() => applyMembershipChanges(this.sql, namespaceId, changes, requests));
  }

  membershipOf(namespaceId: number, userId: number) {
    return membershipOf(this.sql, namespaceId, userId);
  }

  listEffectiveMembers(namespaceIds: number[], offset: number, limit: number) {
    return listEffectiveMembers(this.sql, namespaceIds, offset, limit);
  }

  /** One user's highest membership of these namespaces (a namespace and its ancestors), or null. */
  effectiveMember(namespaceIds: number[], userId: number) {
    return listEffectiveMembers(this.sql, namespaceIds, 0, 1, userId).members[0] ?? null;
  }

  /** A group or project as the registry has it now (its settings and full path change). */
  getNamespace(kind: 'group' | 'project', id: number) {
    return namespaceById(this.sql, kind, id);
  }

  updateNamespace(kind: 'group' | 'project', id: number, changes: NamespaceChanges) {
    return this.ctx.storage.transactionSync(() => updateNamespace(this.sql, kind, id, changes));
  }

  deleteNamespace(kind: 'group' | 'project', id: number) {
    return this.ctx.storage.transactionSync(() => deleteNamespace(this.sql, kind, id));
  }

  /** Where a user has pending access requests (the requester index). */
  pendingRequestsOf(userId: number) {
    return pendingRequestsOf(this.sql, userId);
  }

  // ---- the owners' inbox and the requesters' view (see inbox-index.ts) ----

  /**
   * A page of the reader's inbox with its version; only the version when that is still
   * `knownVersion` (the client's ETag), so an unchanged poll reads one row.
   */
  inbox(
    reader: InboxReader,
    filter: InboxFilter,
    offset: number,
    limit: number,
    knownVersion: number | 'any' | null,
  ): { version: number; page: InboxPage | null } {
    return this.ctx.storage.transactionSync(() => {
      const today = todayUtc();
      const version = inboxVersion(this.sql, reader, today);
      if (version === knownVersion || knownVersion === 'any') return { version, page: null };
      return { version, page: inboxPage(this.sql, reader, filter, offset, limit, today) };
    });
  }

  /**
   * A requester's pending requests and those that ended in the last OUTCOME_DAYS (an approval with
   * an expiry: until OUTCOME_DAYS after it), oldest first. A private group or project shows only
   * while they can see it (a member, directly or inherited, or an administrator).
   */
  ownRequests(userId: number, admin: boolean, offset: number, limit: number): { total: number; items: OwnRequestRow[] } {
    const since = new Date(clock.now() - OUTCOME_DAYS * 24 * 3600 * 1000).toISOString();
    const visible = requestsOf(this.sql, userId, since, since.slice(0, 10)).filter(
      (r) => admin || r.visibility !== 'private' || highestLevelIn(this.sql, userId, [r.namespace_id, ...ancestorIdsOf(this.sql, r.namespace_id)]) > 0,
    );
    return { total: visible.length, items: visible.slice(offset, offset + limit) };
  }

  /** A requester was renamed: the inboxes listing their requests get a new version. */
  requesterRenamed(userId: number): void {
    this.ctx.storage.transactionSync(() => requesterRenamed(this.sql, userId));
  }

  // ---- personal access tokens and impersonation tokens ----

  createAccessToken(input: NewAccessToken): AccessTokenRow {
    const row = this.sql
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
      .one();
    return toAccessToken(row);
  }

  /** A user's tokens of one kind, newest first; `active` filters by state at `now` (epoch seconds). */
  listAccessTokens(
    filter: { userId: number; impersonation: boolean; active?: boolean; now: number },
    offset: number,
    limit: number,
  ): { total: number; tokens: AccessTokenRow[] } {
    const where = 'user_id = ? AND impersonation = ?' + (filter.active === undefined ? '' : filter.active ? ' AND revoked = 0 AND expires_at > ?' : ' AND (revoked = 1 OR expires_at <= ?)');
    const args = [filter.userId, filter.impersonation ? 1 : 0, ...(filter.active === undefined ? [] : [filter.now])];
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

  /** Marks a token revoked (after KV has its tombstone); true when it was not already. */
  markAccessTokenRevoked(id: number): boolean {
    return this.sql.exec('UPDATE access_tokens SET revoked = 1 WHERE id = ? AND revoked = 0 RETURNING id', id).toArray().length > 0;
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

  /** Deletes an application; returns its client id so the caller can end its grants. */
  deleteApplication(id: number): string | null {
    const row = this.sql.exec<{ client_id: string }>('DELETE FROM applications WHERE id = ? RETURNING client_id', id).toArray()[0];
    return row?.client_id ?? null;
  }
}

/** The single Directory instance. */
export const directory = (env: Env) => env.DIRECTORY.getByName('directory');
