import { isoNow } from '../../clock';
import type { Login } from '../sign-in/sign-in';
import type { UserState } from '../user-lifecycle';
import { DirectoryRegistry } from './registry';
import { DELETED_VERSION, type UserRow, type UserSnapshot } from './types';

export const USER_COLUMNS = 'id, username, name, email, admin, state, created_at, version, builtin, two_factor_enabled';
export type RawUser = Omit<UserRow, 'admin' | 'builtin' | 'two_factor_enabled'> & { admin: number; builtin: number; two_factor_enabled: number };
export const toUser = (r: RawUser): UserRow => ({ ...r, admin: r.admin === 1, builtin: r.builtin === 1, two_factor_enabled: r.two_factor_enabled === 1 });
const LOGIN_COLUMNS = `${USER_COLUMNS}, password_hash`;
type RawLogin = RawUser & { password_hash: string | null };
const toLogin = ({ password_hash, ...user }: RawLogin): Login => ({ user: toUser(user), passwordHash: password_hash });

/** The users rows as they are read: one, some, by name, a page of a search, and the built-in administrator. */
export abstract class DirectoryUsers extends DirectoryRegistry {
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
  protected loginOf(username: string): Login | null {
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

  /** A user as copies of it must see it: the row, or that the user was deleted. */
  userSnapshot(id: number): UserSnapshot {
    return this.getUser(id) ?? { id, state: 'deleted', version: DELETED_VERSION };
  }

  protected personalNamespace(username: string): number | null {
    return this.sql.exec<{ id: number }>("SELECT id FROM namespaces WHERE kind = 'user' AND full_path = ?", username).toArray()[0]?.id ?? null;
  }

  /**
   * The built-in administrator behind ADMIN_TOKEN (`root` unless that name is taken, or it was
   * renamed), created on first use. Read here on every call made with ADMIN_TOKEN: its holder is
   * the operator, whose calls are administration, not the API's hot path, so no copy is kept.
   */
  ensureRoot(): UserRow {
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
    return toUser(found);
  }

}
