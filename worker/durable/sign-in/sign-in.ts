import { DurableObject } from 'cloudflare:workers';
import { clock } from '../../clock';
import type { Env } from '../../env';
import type { UserRow } from '../directory/types';
import { migrate } from '../migrations';
import { partitionCount, partitionName, partitionOfName } from '../partitions';
import { SIGN_IN_SCHEMA } from './schema';
import { plainRows } from '../plain-rows';

/** Failed sign-ins allowed per username and per client address within the window. */
const LOGIN_FAILURE_LIMIT = 10;
const LOGIN_WINDOW_MS = 15 * 60 * 1000;

/** A user's login record as a `name:` partition keeps it: the user (as copies of it are told) and the password hash. */
export interface Login {
  user: UserRow;
  passwordHash: string | null;
}

/**
 * What the Directory tells a `name:` partition about one user, as of the users row's `version`:
 * its login record, or (`login: null`) that the user's name is not in this partition any more.
 */
export interface LoginChange {
  userId: number;
  version: number;
  login: Login | null;
}

/** The first half of a sign-in in the name's partition: refused for now, or the attempt counted and the record (if any). */
type SignInAttempt = { retryAfter: number } | { attempt: number; login: Login | null };

/** The `name:` partition object of a username. */
export const namePartition = (env: Env, username: string) => env.SIGN_IN.getByName(partitionName('name', partitionOfName(username, partitionCount(env))));
/** The `address:` partition object of a client address. */
export const addressPartition = (env: Env, address: string) => env.SIGN_IN.getByName(partitionName('address', partitionOfName(address, partitionCount(env))));

/**
 * Sign-in state, partitioned so that no single object takes every sign-in (docs/decisions.md,
 * "The Directory on no hot path"). Two roles, each `DIRECTORY_PARTITIONS` objects:
 *
 * - `name:<partition of the lower-case username>`: a copy of each user's login record, pushed by
 *   the Directory's user fan-out with every change (creation, rename, new password, state,
 *   deletion), newer versions only; and the per-username throttle. A creation's fan-out reaches
 *   the partition before the creation answers 201 (else it answers 503 and the Directory's alarm
 *   retries), so a username the partition does not hold is no user's: the Directory is not asked.
 * - `address:<partition of the client address>`: the per-address failures.
 */
export class SignIn extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, SIGN_IN_SCHEMA);
  }

  // ---- a `name:` partition ----

  /**
   * Refuses a throttled username, else counts the attempt against it before the password is
   * checked outside this object (so simultaneous guesses at one account cannot all pass the check
   * before a failure is recorded) and returns the login record to check it against.
   */
  beginSignIn(username: string): SignInAttempt {
    const key = username.toLowerCase();
    const retryAfter = this.throttled(key);
    if (retryAfter > 0) return { retryAfter };
    const attempt = this.sql.exec<{ id: number }>('INSERT INTO failures (key, at) VALUES (?, ?) RETURNING rowid AS id', key, clock.now()).one().id;
    return { attempt, login: this.login(username) };
  }

  /** The attempt was refused for another reason (its address was throttled): it does not count. */
  giveBack(attempt: number): void {
    this.sql.exec('DELETE FROM failures WHERE rowid = ?', attempt);
  }

  /** A sign-in succeeded: the username's failures are cleared. */
  signedIn(username: string): void {
    this.sql.exec('DELETE FROM failures WHERE key = ?', username.toLowerCase());
  }

  /** Takes each change newer than what this partition has for its user. */
  applyLogins(changes: LoginChange[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const change of changes) this.apply(change);
    });
  }

  private login(username: string): Login | null {
    const row = this.sql.exec<{ user: string; password_hash: string | null }>('SELECT user, password_hash FROM logins WHERE username = ?', username).toArray()[0];
    return row ? { user: JSON.parse(row.user) as UserRow, passwordHash: row.password_hash } : null;
  }

  private apply(change: LoginChange): void {
    const held = this.sql.exec<{ version: number }>('SELECT version FROM logins WHERE user_id = ?', change.userId).toArray()[0];
    if (held && held.version >= change.version) return;
    const login = change.login;
    if (login) {
      // The Directory gave this name to this user after whoever held it here let it go (usernames
      // are unique there); that user's own change, which takes it away, may still be on its way.
      this.sql.exec('UPDATE logins SET username = NULL, user = NULL, password_hash = NULL WHERE username = ? AND user_id != ?', login.user.username, change.userId);
    }
    this.sql.exec(
      `INSERT INTO logins (user_id, username, user, password_hash, version) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET username = excluded.username, user = excluded.user, password_hash = excluded.password_hash, version = excluded.version`,
      change.userId,
      login?.user.username ?? null,
      login ? JSON.stringify(login.user) : null,
      login?.passwordHash ?? null,
      change.version,
    );
  }

  // ---- an `address:` partition ----

  /** Seconds until the address may try again (0: it may now). */
  addressRetryAfter(address: string): number {
    return this.throttled(address);
  }

  /**
   * A failed sign-in from the address. Counted once known, not before the check: many people may
   * sign in at once from one address.
   */
  addressFailed(address: string): void {
    this.sql.exec('INSERT INTO failures (key, at) VALUES (?, ?)', address, clock.now());
  }

  // ---- both ----

  /** Seconds until `key` is below the limit again within the window; 0 when it is now. Forgets failures older than the window. */
  private throttled(key: string): number {
    const now = clock.now();
    this.sql.exec('DELETE FROM failures WHERE at <= ?', now - LOGIN_WINDOW_MS);
    const { n, first } = this.sql.exec<{ n: number; first: number | null }>('SELECT COUNT(*) AS n, MIN(at) AS first FROM failures WHERE key = ?', key).one();
    return n >= LOGIN_FAILURE_LIMIT && first !== null ? Math.ceil((first + LOGIN_WINDOW_MS - now) / 1000) : 0;
  }
}
