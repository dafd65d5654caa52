import { DurableObject } from 'cloudflare:workers';
import { randomToken } from '../../auth/crypto';
import { clock, epochSeconds, isoNow } from '../../clock';
import { config } from '../../config';
import type { Env } from '../../env';
import { problems, type Problem } from '../../errors';
import { verifierMatches, s256 } from '../../protocol/pkce';
import { openResponse, retryKey, sealResponse } from '../../protocol/sealed-response';
import { tokenResponse, type TokenResponse } from '../../protocol/token-response';
import {
  AUTHORIZATION_CODE_PREFIX,
  REFRESH_TOKEN_PREFIX,
  accessTokenRecord,
  hashSecret,
  newAccessToken,
  newRoutedSecret,
  putAccessToken,
  revokeAccessTokens,
  type AccessTokenRecord,
  type TokenFacts,
} from '../../store/tokens';
import { clientHoldersOf } from '../client-holders/client-holders';
import { directory } from '../directory/directory';
import type { SessionLookup, UserRow, UserSnapshot } from '../directory/types';
import { USER_SCHEMA } from './schema';
import { migrate } from '../migrations';
import { fail, ok, type Result } from '../result';

/** An identical retry of a rotated refresh token within this window gets the same answer (see retryOrRevoke). */
export const RETRY_GRACE_SECONDS = 30;
/** Redeemed codes are kept this long past their expiry so a late replay still revokes. */
const USED_CODE_MEMORY_SECONDS = 24 * 3600;

export interface CodeRequest {
  userId: number;
  clientId: string;
  /** The redirect_uri the authorization request named; null when it named none. */
  redirectUri: string | null;
  scopes: string[];
  codeChallenge: string | null;
  /** Remember the user's consent, so the next identical authorization needs no page. */
  rememberConsent: boolean;
}

/** A code, or why none was issued. */
export type IssuedCode = { code: string } | { refused: 'inactive_user' | 'deleted_client' };

export interface CodeRedemption {
  userId: number;
  code: string;
  clientId: string;
  publicClient: boolean;
  redirectUri: string | null;
  codeVerifier: string | null;
}

export interface RefreshRequest {
  userId: number;
  refreshToken: string;
  clientId: string;
  /** RFC 6749 §6: an optional narrower scope. */
  scope: string[] | null;
}

/** What the authorized-applications page lists: one entry per application. */
export interface Authorization {
  clientId: string;
  scopes: string[];
  authorizedAt: string;
}

export interface RefreshTokenInfo {
  userId: number;
  clientId: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
}

type CodeRow = {
  hash: string;
  client_id: string;
  user_id: number;
  redirect_uri: string | null;
  scopes: string;
  code_challenge: string | null;
  expires_at: number;
  grant_id: string | null;
};

type PairRow = {
  refresh_hash: string;
  grant_id: string;
  access_hash: string;
  access_expires_at: number;
  refresh_expires_at: number;
  scopes: string;
  created_at: number;
  state: 'active' | 'rotated' | 'revoked';
  successor_hash: string | null;
  retry_request: string | null;
  retry_response: ArrayBuffer | null;
  retry_until: number | null;
  client_id: string;
  user_id: number;
  grant_scopes: string;
  grant_revoked_at: string | null;
};

/** A token pair made ready (and hashed) before the transaction that decides whether it exists. */
interface PreparedPair {
  grantId: string;
  response: TokenResponse;
  accessHash: string;
  refreshHash: string;
  refreshExpiresAt: number;
  /** What the access token's KV record says besides the user, whose profile is read in the transaction. */
  token: TokenFacts;
}

type EndedToken = { hash: string; expiresAt: number };

/** What a transaction decided; the effects outside the object (KV writes) follow it. */
type Decision =
  | { kind: 'issued'; pair: PreparedPair; record: AccessTokenRecord; ended: EndedToken[] }
  | { kind: 'refused'; problem: Problem; ended: EndedToken[] };
/** A refresh may also be answered again with the sealed answer of an identical earlier one. */
type Outcome = Decision | { kind: 'retry'; sealed: ArrayBuffer };

const invalidGrant = (description: string) => problems.oauth('invalid_grant', description);
const inactiveUser = () => invalidGrant('The user of this authorization is no longer active.');
const refused = (problem: Problem, ended: EndedToken[] = []): Decision => ({ kind: 'refused', problem, ended });

const PAIR_SELECT = `SELECT p.*, g.client_id, g.user_id, g.scopes AS grant_scopes, g.revoked_at AS grant_revoked_at
  FROM token_pairs p JOIN grants g ON g.id = p.grant_id`;

const scopeList = (s: string) => s.split(' ').filter(Boolean);
const covers = (granted: string[], wanted: string[]) => wanted.every((s) => granted.includes(s));
const isActive = (u: UserSnapshot): u is UserRow => u.state === 'active';

/**
 * One user's grant authority: authorization codes, consents, grants and their token pairs. Every
 * protocol transition (redeem, rotate, revoke) is decided in one synchronous transaction, so
 * concurrent requests are serialised: a code yields one pair, a refresh token one successor.
 * Secrets are prepared and hashed before the transaction; KV is written after it.
 */
export class User extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** KV writes of new access tokens still in flight (see `syncTokens`). */
  private readonly writes = new Set<Promise<unknown>>();
  /** The running `syncTokens`, so that runs follow one another. */
  private syncing: Promise<void> = Promise.resolve();
  /** When the alarm that was last set will ring (ms), while it has not rung; null when unknown. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, USER_SCHEMA);
  }

  // ---- consent and codes (authorize endpoint) ----

  /** Whether the user already agreed to give this application these scopes (or more). */
  // ---- where the user's index rows are ----

  /**
   * Index partitions now holding rows of this user (idempotent; the set only grows). Answers the
   * user as this object was last told (null if never): a user change fanned out from here on
   * reaches these partitions, and one fanned out before reached this object first, so the
   * partition takes this answer and misses no change (see `applyUser`).
   */
  addIndexPartitions(partitions: number[]): UserSnapshot | null {
    for (const p of partitions) this.sql.exec('INSERT INTO index_partitions (partition) VALUES (?) ON CONFLICT (partition) DO NOTHING', p);
    return this.storedUser();
  }

  /** The index partitions holding rows of this user, ascending. */
  indexPartitions(): number[] {
    return this.sql.exec<{ partition: number }>('SELECT partition FROM index_partitions ORDER BY partition').toArray().map((r) => r.partition);
  }

  hasConsent(clientId: string, scopes: string[]): boolean {
    return this.sql
      .exec<{ scopes: string }>('SELECT scopes FROM consents WHERE client_id = ?', clientId)
      .toArray()
      .some((row) => covers(scopeList(row.scopes), scopes));
  }

  /**
   * A new single-use authorization code (RFC 6749 §4.1.2), valid for the configured lifetime; or
   * why there is none: the user may no longer act (blocked while authorizing), so no code outlives
   * a block; or the application was deleted. The caller may have resolved the application from an
   * isolate's cache, so the deletion is judged here: by this object's record of applications
   * deleted while the user held grants for them, and, the first time the user authorizes the
   * application, by the application's own object, which marks the deletion before it lists the
   * holders whose grants it ends.
   */
  async issueCode(req: CodeRequest): Promise<IssuedCode> {
    if (!isActive(await this.user(req.userId))) return { refused: 'inactive_user' };
    if (this.clientDeleted(req.clientId)) return { refused: 'deleted_client' };
    const indexed = this.sql.exec('SELECT 1 FROM indexed_clients WHERE client_id = ?', req.clientId).toArray().length > 0;
    // So that deleting the application can find this user's grants; once per application.
    if (!indexed && !(await clientHoldersOf(this.env, req.clientId).add(req.userId))) return { refused: 'deleted_client' };
    const code = newRoutedSecret(AUTHORIZATION_CODE_PREFIX, req.userId);
    const hash = await hashSecret(this.env, code);
    const now = epochSeconds();
    const scopes = [...req.scopes].sort().join(' ');
    const issued = this.ctx.storage.transactionSync((): IssuedCode | null => {
      const user = this.storedUser();
      if (!user || !isActive(user)) return { refused: 'inactive_user' };
      if (this.clientDeleted(req.clientId)) return { refused: 'deleted_client' };
      this.cleanUp(now);
      this.sql.exec('INSERT INTO indexed_clients (client_id) VALUES (?) ON CONFLICT DO NOTHING', req.clientId);
      if (req.rememberConsent) {
        this.sql.exec(
          'INSERT INTO consents (client_id, scopes, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          req.clientId,
          scopes,
          isoNow(),
        );
      }
      this.sql.exec(
        `INSERT INTO codes (hash, client_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        hash,
        req.clientId,
        req.userId,
        req.redirectUri,
        scopes,
        req.codeChallenge,
        now + config(this.env).codeTtl,
      );
      return null;
    });
    return issued ?? { code };
  }

  private clientDeleted(clientId: string): boolean {
    return this.sql.exec('SELECT 1 FROM deleted_clients WHERE client_id = ?', clientId).toArray().length > 0;
  }

  // ---- token endpoint ----

  /** RFC 6749 §4.1.3 with RFC 7636 §4.6: trades a code for the grant's first token pair. */
  async redeemCode(r: CodeRedemption): Promise<Result<TokenResponse>> {
    const codeHash = await hashSecret(this.env, r.code);
    const seen = this.code(codeHash);
    if (!seen || seen.user_id !== r.userId) return fail(invalidGrant('The authorization code is invalid, expired or already used.'));
    if (!isActive(await this.user(seen.user_id))) return fail(inactiveUser());
    const transformed = r.codeVerifier ? await s256(r.codeVerifier) : '';
    const pair = await this.preparePair(seen.user_id, seen.client_id, randomToken('', 16), scopeList(seen.scopes));

    const outcome = this.ctx.storage.transactionSync((): Decision => {
      const now = epochSeconds();
      const user = this.storedUser();
      if (!user || !isActive(user)) return refused(inactiveUser());
      const code = this.code(codeHash);
      if (!code) return refused(invalidGrant('The authorization code is invalid, expired or already used.'));
      if (code.grant_id) return this.refuseReplayedCode(code, now);
      if (code.expires_at <= now) {
        this.sql.exec('DELETE FROM codes WHERE hash = ?', codeHash);
        return refused(invalidGrant('The authorization code has expired.'));
      }
      if (code.client_id !== r.clientId) return refused(invalidGrant('The authorization code was issued to another client.'));
      // RFC 6749 §4.1.3: required, and identical, when the authorization request named one.
      if (r.redirectUri !== code.redirect_uri) {
        const named = code.redirect_uri !== null;
        return refused(invalidGrant(named ? 'redirect_uri must be the one the authorization request named.' : 'redirect_uri was not part of the authorization request.'));
      }
      const pkce = this.checkPkce(code, r, transformed);
      if (pkce) return refused(pkce);

      this.sql.exec(
        'INSERT INTO grants (id, client_id, user_id, scopes, created_at) VALUES (?, ?, ?, ?, ?)',
        pair.grantId,
        code.client_id,
        code.user_id,
        code.scopes,
        isoNow(),
      );
      this.sql.exec('UPDATE codes SET grant_id = ? WHERE hash = ?', pair.grantId, codeHash);
      this.insertPair(pair);
      return { kind: 'issued', pair, record: accessTokenRecord(user, pair.token), ended: [] };
    });
    return this.settle(outcome);
  }

  /** RFC 6749 §6 with rotation (RFC 9700 §4.14.2): a new pair; the presented pair ends. */
  async refresh(r: RefreshRequest): Promise<Result<TokenResponse>> {
    const hash = await hashSecret(this.env, r.refreshToken);
    const seen = this.pair(hash);
    if (!seen || seen.user_id !== r.userId) return fail(invalidGrant('The refresh token is invalid, expired or revoked.'));
    if (seen.client_id !== r.clientId) return fail(invalidGrant('The refresh token was issued to another client.'));
    const grantScopes = scopeList(seen.grant_scopes);
    if (r.scope && !covers(grantScopes, r.scope)) {
      return fail(problems.oauth('invalid_scope', 'The requested scope exceeds the scope granted by the resource owner.'));
    }
    if (!isActive(await this.user(seen.user_id))) return fail(inactiveUser());
    const pair = await this.preparePair(seen.user_id, seen.client_id, seen.grant_id, r.scope ?? grantScopes);
    const key = await retryKey(this.env, r.refreshToken);
    const sealed = await sealResponse(key, pair.response);
    const retryRequest = JSON.stringify([r.clientId, r.scope ? [...r.scope].sort().join(' ') : null]);

    const outcome = this.ctx.storage.transactionSync((): Outcome => {
      const now = epochSeconds();
      const user = this.storedUser();
      if (!user || !isActive(user)) return refused(inactiveUser());
      const current = this.pair(hash);
      if (!current) return refused(invalidGrant('The refresh token is invalid, expired or revoked.'));
      if (current.grant_revoked_at || current.state === 'revoked') return refused(invalidGrant('The refresh token has been revoked.'));
      if (current.state === 'rotated') return this.retryOrRevoke(current, retryRequest, now);
      if (current.refresh_expires_at <= now) return refused(invalidGrant('The refresh token has expired.'));

      this.sql.exec(
        `UPDATE token_pairs SET state = 'rotated', rotated_at = ?, successor_hash = ?, retry_request = ?, retry_response = ?, retry_until = ?
         WHERE refresh_hash = ?`,
        now,
        pair.refreshHash,
        retryRequest,
        sealed,
        now + RETRY_GRACE_SECONDS,
        hash,
      );
      this.insertPair(pair);
      return { kind: 'issued', pair, record: accessTokenRecord(user, pair.token), ended: [{ hash: current.access_hash, expiresAt: current.access_expires_at }] };
    });
    if (outcome.kind === 'retry') {
      const again = await openResponse(key, outcome.sealed);
      return again ? ok(again) : fail(invalidGrant('The refresh token has already been used.'));
    }
    if (outcome.kind === 'issued') await this.forgetRetryAnswerLater();
    return this.settle(outcome);
  }

  /** The sealed retry answer is kept for the grace window only: an alarm deletes it afterwards. */
  private async forgetRetryAnswerLater(): Promise<void> {
    await this.alarmBy(clock.now() + (RETRY_GRACE_SECONDS + 1) * 1000);
  }

  /** Makes sure the alarm rings by `at` (ms); remembers the time set, to skip asking again. */
  private async alarmBy(at: number): Promise<void> {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    const current = await this.ctx.storage.getAlarm();
    if (current !== null && current <= at) {
      this.alarmAt = current;
      return;
    }
    await this.ctx.storage.setAlarm(at);
    this.alarmAt = at;
  }

  /**
   * Garbage collection, off the token endpoint's path: expired codes and pairs, and retry answers
   * whose window is over. Rings again for answers still inside their window (a rotation while an
   * earlier alarm was pending relies on it).
   */
  async alarm(): Promise<void> {
    this.alarmAt = null;
    const next = this.ctx.storage.transactionSync(() => {
      this.cleanUp(epochSeconds());
      return this.sql
        .exec<{ until: number | null }>('SELECT MIN(retry_until) AS until FROM token_pairs WHERE retry_response IS NOT NULL')
        .one().until;
    });
    if (next !== null) await this.alarmBy((next + 1) * 1000);
  }

  // ---- browser sessions ----

  /**
   * A browser session for the user, who signed in as `user` (the Directory's row when the password
   * was checked; kept if it is newer than what this object was told). False, and no session, when
   * the user may no longer act: a block that committed meanwhile reaches this object before it
   * answers, and ends every session here in the same transaction (`applyUser`).
   */
  createSession(user: UserRow, idHash: string, csrfToken: string, ttlSeconds: number): boolean {
    this.storeUser(user);
    const current = this.storedUser();
    if (!current || !isActive(current)) return false;
    const now = clock.now();
    this.sql.exec('DELETE FROM sessions WHERE expires_at <= ?', now);
    this.sql.exec(
      'INSERT INTO sessions (id_hash, csrf_token, created_at, expires_at, user_version) VALUES (?, ?, ?, ?, ?)',
      idHash,
      csrfToken,
      new Date(now).toISOString(),
      now + ttlSeconds * 1000,
      current.version,
    );
    return true;
  }

  /**
   * The session and the user as this object was last told (every change is pushed before it
   * answers); why it no longer works when the user was blocked or deactivated since; null for no
   * (live) session.
   */
  getSession(idHash: string): SessionLookup {
    const row = this.sql.exec<{ csrf_token: string; expires_at: number }>('SELECT csrf_token, expires_at FROM sessions WHERE id_hash = ?', idHash).toArray()[0];
    if (!row || row.expires_at <= clock.now()) return null;
    const user = this.storedUser();
    if (!user || user.state === 'deleted') return null;
    if (user.state !== 'active') return { endedBecause: user.state };
    return { user, csrfToken: row.csrf_token };
  }

  deleteSession(idHash: string): void {
    this.sql.exec('DELETE FROM sessions WHERE id_hash = ?', idHash);
  }

  /** Ends every browser session of the user ("sign out everywhere"). */
  deleteSessions(): void {
    this.sql.exec('DELETE FROM sessions');
  }

  // ---- revocation and introspection ----

  /** RFC 7009 §2.1: revoking a refresh token ends its grant and every token issued under it. */
  async revokeRefreshToken(refreshToken: string, clientId: string): Promise<void> {
    const hash = await hashSecret(this.env, refreshToken);
    const ended = this.ctx.storage.transactionSync(() => {
      const pair = this.pair(hash);
      return pair && pair.client_id === clientId ? this.revokeGrantTx(pair.grant_id, epochSeconds()) : [];
    });
    await revokeAccessTokens(this.env, ended);
  }

  /** Ends one grant (revoking one of its access tokens ends it, as revoking its refresh token does). */
  async revokeGrant(grantId: string, clientId: string): Promise<void> {
    const ended = this.ctx.storage.transactionSync(() => {
      const grant = this.sql.exec<{ client_id: string }>('SELECT client_id FROM grants WHERE id = ?', grantId).toArray()[0];
      return grant && grant.client_id === clientId ? this.revokeGrantTx(grantId, epochSeconds()) : [];
    });
    await revokeAccessTokens(this.env, ended);
  }

  /** RFC 7662 for refresh tokens: what an active one is, or null. */
  async describeRefreshToken(refreshToken: string): Promise<RefreshTokenInfo | null> {
    const pair = this.pair(await hashSecret(this.env, refreshToken));
    if (!pair || pair.state !== 'active' || pair.grant_revoked_at || pair.refresh_expires_at <= epochSeconds()) return null;
    return {
      userId: pair.user_id,
      clientId: pair.client_id,
      scopes: scopeList(pair.grant_scopes),
      issuedAt: pair.created_at,
      expiresAt: pair.refresh_expires_at,
    };
  }

  // ---- authorized applications ----

  /** Each application the user has authorized (consented to or holds live tokens for). */
  listAuthorizations(): Authorization[] {
    const now = epochSeconds();
    const rows = this.sql
      .exec<{ client_id: string; scopes: string; created_at: string }>(
        `SELECT client_id, scopes, created_at FROM consents
         UNION ALL
         SELECT g.client_id, g.scopes, g.created_at FROM grants g
         WHERE g.revoked_at IS NULL AND EXISTS (
           SELECT 1 FROM token_pairs p WHERE p.grant_id = g.id AND p.state = 'active' AND p.refresh_expires_at > ?)`,
        now,
      )
      .toArray();
    const byClient = new Map<string, Authorization>();
    for (const row of rows) {
      const seen = byClient.get(row.client_id);
      if (!seen) {
        byClient.set(row.client_id, { clientId: row.client_id, scopes: scopeList(row.scopes), authorizedAt: row.created_at });
        continue;
      }
      seen.scopes = [...new Set([...seen.scopes, ...scopeList(row.scopes)])].sort();
      if (row.created_at < seen.authorizedAt) seen.authorizedAt = row.created_at;
    }
    return [...byClient.values()].sort((a, b) => a.authorizedAt.localeCompare(b.authorizedAt));
  }

  /**
   * Ends everything the user gave an application: its grants and tokens, pending codes and the
   * remembered consent. `forgetIndex` when the application itself is being deleted (its holder
   * index forgets this user too): then no code is issued for it here again.
   */
  async revokeClient(clientId: string, forgetIndex = false): Promise<void> {
    const ended = this.ctx.storage.transactionSync(() => {
      const now = epochSeconds();
      const grants = this.sql
        .exec<{ id: string }>('SELECT id FROM grants WHERE client_id = ? AND revoked_at IS NULL', clientId)
        .toArray();
      const ended = grants.flatMap((g) => this.revokeGrantTx(g.id, now));
      this.sql.exec('DELETE FROM codes WHERE client_id = ? AND grant_id IS NULL', clientId);
      this.sql.exec('DELETE FROM consents WHERE client_id = ?', clientId);
      if (forgetIndex) {
        this.sql.exec('DELETE FROM indexed_clients WHERE client_id = ?', clientId);
        this.sql.exec('INSERT INTO deleted_clients (client_id) VALUES (?) ON CONFLICT DO NOTHING', clientId);
      }
      return ended;
    });
    await revokeAccessTokens(this.env, ended);
  }

  // ---- the user, as the Directory says ----

  /**
   * The Directory's word on this object's user, pushed with every change to the users row (a
   * rename, a new email or administrator flag, a block, a deactivation, a deletion). A newer
   * version replaces the stored one. A user who may no longer act loses every grant, pending code
   * and remembered consent here; unblocking brings none of them back. Then every access token
   * still live in KV is brought in line: rewritten with the new profile, or replaced by a
   * tombstone. Returns when KV has it all, so the block that pushed it can answer, with the index
   * partitions that hold rows of the user, read in the transaction that stored the change: the
   * fan-out tells those, and a partition added later learns the change from `addIndexPartitions`.
   */
  async applyUser(snapshot: UserSnapshot, endSessions = false): Promise<number[]> {
    const partitions = this.ctx.storage.transactionSync(() => {
      // A new password ends the sessions begun before it (also when this is a retry of that push).
      if (endSessions) this.sql.exec('DELETE FROM sessions WHERE user_version < ?', snapshot.version);
      const before = this.storedUser();
      if (this.storeUser(snapshot)) {
        // A blocked or deactivated user's sessions stay, refused, so the next page can say why;
        // becoming active again ends them for good (what a block ended stays ended), as deletion does.
        if (snapshot.state === 'deleted' || (isActive(snapshot) && before !== null && !isActive(before))) this.sql.exec('DELETE FROM sessions');
        if (!isActive(snapshot)) {
          const now = epochSeconds();
          for (const g of this.sql.exec<{ id: string }>('SELECT id FROM grants WHERE revoked_at IS NULL').toArray()) this.revokeGrantTx(g.id, now);
          this.sql.exec('DELETE FROM codes WHERE grant_id IS NULL');
          this.sql.exec('DELETE FROM consents');
        }
      }
      return this.indexPartitions();
    });
    // The tombstones of the grants just ended, with every other access token KV may still accept.
    await this.syncTokens();
    return partitions;
  }

  /** The stored user, or the Directory's answer (stored) when this object has not been told. */
  private async user(userId: number): Promise<UserSnapshot> {
    const stored = this.storedUser();
    if (stored) return stored;
    const fetched = await directory(this.env).userSnapshot(userId);
    this.storeUser(fetched);
    return this.storedUser() ?? fetched;
  }

  private storedUser(): UserSnapshot | null {
    const row = this.sql.exec<{ snapshot: string }>('SELECT snapshot FROM user_state').toArray()[0];
    return row ? (JSON.parse(row.snapshot) as UserSnapshot) : null;
  }

  /** Keeps `snapshot` if it is newer than the stored one; true when it was. */
  private storeUser(snapshot: UserSnapshot): boolean {
    return (
      this.sql
        .exec(
          `INSERT INTO user_state (singleton, snapshot, version) VALUES (1, ?, ?)
           ON CONFLICT (singleton) DO UPDATE SET snapshot = excluded.snapshot, version = excluded.version
           WHERE excluded.version > user_state.version RETURNING version`,
          JSON.stringify(snapshot),
          snapshot.version,
        )
        .toArray().length > 0
    );
  }

  /** Remembers a KV write of a new token until it lands (see `syncTokens`). */
  private track<T>(write: Promise<T>): Promise<T> {
    this.writes.add(write);
    const done = () => this.writes.delete(write);
    write.then(done, done);
    return write;
  }

  /**
   * Makes every access token of this user that KV may still accept agree with the stored user:
   * for an active user, live tokens carry the current profile; otherwise each becomes a tombstone.
   * Runs one at a time; each first waits for the new tokens still being written, so none of those
   * lands after it. Repeats while the user changed meanwhile.
   */
  private syncTokens(): Promise<void> {
    const run = this.syncing.then(async () => {
      for (;;) {
        await Promise.allSettled([...this.writes]);
        const state = this.sql.exec<{ snapshot: string; version: number; synced_version: number }>('SELECT snapshot, version, synced_version FROM user_state').toArray()[0];
        if (!state || state.synced_version >= state.version) return;
        const user = JSON.parse(state.snapshot) as UserSnapshot;
        const now = epochSeconds();
        if (isActive(user)) {
          const live = this.sql
            .exec<{ access_hash: string; access_expires_at: number; scopes: string; created_at: number; grant_id: string; client_id: string }>(
              `SELECT p.access_hash, p.access_expires_at, p.scopes, p.created_at, p.grant_id, g.client_id
               FROM token_pairs p JOIN grants g ON g.id = p.grant_id
               WHERE p.state = 'active' AND g.revoked_at IS NULL AND p.access_expires_at > ?`,
              now,
            )
            .toArray();
          await Promise.all(
            live.map((t) =>
              putAccessToken(
                this.env,
                t.access_hash,
                accessTokenRecord(user, { scopes: scopeList(t.scopes), clientId: t.client_id, grantId: t.grant_id, tokenId: null, createdAt: t.created_at, expiresAt: t.access_expires_at }),
              ),
            ),
          );
          // A grant revoked while those were written: its tombstone must be the last write.
          const ended = live.filter((t) => !this.sql.exec("SELECT 1 FROM token_pairs p JOIN grants g ON g.id = p.grant_id WHERE p.access_hash = ? AND p.state = 'active' AND g.revoked_at IS NULL", t.access_hash).toArray()[0]);
          await revokeAccessTokens(this.env, ended.map((t) => ({ hash: t.access_hash, expiresAt: t.access_expires_at })));
        } else {
          const live = this.sql
            .exec<{ hash: string; expiresAt: number }>('SELECT access_hash AS hash, access_expires_at AS expiresAt FROM token_pairs WHERE access_expires_at > ?', now)
            .toArray();
          await revokeAccessTokens(this.env, live);
        }
        this.sql.exec('UPDATE user_state SET synced_version = ? WHERE version = ?', state.version, state.version);
      }
    });
    this.syncing = run.catch(() => undefined);
    return run;
  }

  // ---- rules, each in one place ----

  /** RFC 7636 §4.6 and RFC 9700 §2.1.1: a verifier exactly when a challenge was sent; public clients always. */
  private checkPkce(code: CodeRow, r: CodeRedemption, transformed: string): Problem | null {
    if (code.code_challenge === null) {
      if (r.codeVerifier) return invalidGrant('code_verifier was sent but the authorization request had no code_challenge.');
      if (r.publicClient) return invalidGrant('Public clients must use PKCE (S256).');
      return null;
    }
    if (!r.codeVerifier) return invalidGrant('code_verifier is required: the authorization request had a code_challenge.');
    if (!verifierMatches(r.codeVerifier, transformed, code.code_challenge)) return invalidGrant('code_verifier does not match the code_challenge.');
    return null;
  }

  /** RFC 6749 §4.1.2 and §10.5: a code used twice is refused and everything issued from it is revoked. */
  private refuseReplayedCode(code: CodeRow, now: number): Decision {
    const ended = this.revokeGrantTx(code.grant_id as string, now);
    return refused(invalidGrant('The authorization code has already been used; tokens issued from it have been revoked.'), ended);
  }

  /**
   * A rotated refresh token presented again (RFC 9700 §4.14.2) means it leaked: the grant ends.
   * Except an identical retry within RETRY_GRACE_SECONDS whose successor is still unused: that is
   * a lost response (the client never saw the new pair), and it gets the same answer again.
   */
  private retryOrRevoke(pair: PairRow, retryRequest: string, now: number): Outcome {
    const successor = pair.successor_hash
      ? this.sql.exec<{ state: string }>('SELECT state FROM token_pairs WHERE refresh_hash = ?', pair.successor_hash).toArray()[0]
      : undefined;
    const identicalRetry =
      pair.retry_response !== null &&
      pair.retry_until !== null &&
      now < pair.retry_until &&
      pair.retry_request === retryRequest &&
      successor?.state === 'active';
    if (identicalRetry) return { kind: 'retry', sealed: pair.retry_response as ArrayBuffer };
    const ended = this.revokeGrantTx(pair.grant_id, now);
    return refused(invalidGrant('The refresh token has already been used; the authorization has been revoked.'), ended);
  }

  /** Marks a grant and all its pairs revoked; returns the access tokens KV must forget. */
  private revokeGrantTx(grantId: string, now: number): EndedToken[] {
    this.sql.exec('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', isoNow(), grantId);
    const live = this.sql
      .exec<{ access_hash: string; access_expires_at: number }>(
        'SELECT access_hash, access_expires_at FROM token_pairs WHERE grant_id = ? AND access_expires_at > ?',
        grantId,
        now,
      )
      .toArray();
    this.sql.exec(
      "UPDATE token_pairs SET state = 'revoked', retry_request = NULL, retry_response = NULL WHERE grant_id = ?",
      grantId,
    );
    return live.map((t) => ({ hash: t.access_hash, expiresAt: t.access_expires_at }));
  }

  // ---- helpers ----

  private code(hash: string): CodeRow | undefined {
    return this.sql.exec<CodeRow>('SELECT * FROM codes WHERE hash = ?', hash).toArray()[0];
  }

  private pair(refreshHash: string): PairRow | undefined {
    return this.sql.exec<PairRow>(`${PAIR_SELECT} WHERE p.refresh_hash = ?`, refreshHash).toArray()[0];
  }

  private async preparePair(userId: number, clientId: string, grantId: string, scopes: string[]): Promise<PreparedPair> {
    const { accessTokenTtl, refreshTokenTtl } = config(this.env);
    const now = epochSeconds();
    const accessToken = newAccessToken(now + accessTokenTtl);
    const refreshToken = newRoutedSecret(REFRESH_TOKEN_PREFIX, userId);
    const [accessHash, refreshHash] = await Promise.all([hashSecret(this.env, accessToken), hashSecret(this.env, refreshToken)]);
    const scope = [...scopes].sort().join(' ');
    return {
      grantId,
      accessHash,
      refreshHash,
      refreshExpiresAt: now + refreshTokenTtl,
      response: tokenResponse({ accessToken, refreshToken, expiresIn: accessTokenTtl, scope, createdAt: now }),
      token: { scopes: scope.split(' '), clientId, grantId, tokenId: null, createdAt: now, expiresAt: now + accessTokenTtl },
    };
  }

  private insertPair(p: PreparedPair): void {
    this.sql.exec(
      `INSERT INTO token_pairs (refresh_hash, grant_id, access_hash, access_expires_at, refresh_expires_at, scopes, created_at, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'active')`,
      p.refreshHash,
      p.grantId,
      p.accessHash,
      p.token.expiresAt,
      p.refreshExpiresAt,
      p.response.scope,
      p.token.createdAt,
    );
  }

  /** Applies a decided outcome to KV: the new access token appears, ended ones become tombstones. */
  private async settle(outcome: Decision): Promise<Result<TokenResponse>> {
    if (outcome.kind === 'refused') {
      await revokeAccessTokens(this.env, outcome.ended);
      return fail(outcome.problem);
    }
    const { pair, record } = outcome;
    // Different keys (the ended token's tombstone, the new token): written side by side, and
    // tracked, so a change of the user waits for this write before it rewrites or ends the token.
    await this.track(Promise.all([revokeAccessTokens(this.env, outcome.ended), putAccessToken(this.env, pair.accessHash, record)]));
    // A revocation decided while the token was being written (a replayed code, a reused refresh
    // token) may have written its tombstone first; make sure the revocation wins.
    const grant = this.sql.exec<{ revoked_at: string | null }>('SELECT revoked_at FROM grants WHERE id = ?', pair.grantId).toArray()[0];
    if (!grant || grant.revoked_at) {
      await revokeAccessTokens(this.env, [{ hash: pair.accessHash, expiresAt: record.expiresAt }]);
    }
    return ok(pair.response);
  }

  /** Forgets what can no longer matter: long-expired codes, dead pairs, stale retry answers. */
  private cleanUp(now: number): void {
    this.sql.exec('DELETE FROM codes WHERE expires_at <= ?', now - USED_CODE_MEMORY_SECONDS);
    this.sql.exec('DELETE FROM sessions WHERE expires_at <= ?', now * 1000);
    this.sql.exec('DELETE FROM token_pairs WHERE refresh_expires_at <= ? AND access_expires_at <= ?', now, now);
    this.sql.exec(
      'UPDATE token_pairs SET retry_request = NULL, retry_response = NULL WHERE retry_until <= ? AND retry_response IS NOT NULL',
      now,
    );
    this.sql.exec(
      `DELETE FROM grants WHERE NOT EXISTS (SELECT 1 FROM token_pairs p WHERE p.grant_id = grants.id)
         AND NOT EXISTS (SELECT 1 FROM codes c WHERE c.grant_id = grants.id)`,
    );
  }
}

/** The grant authority of one user. */
export const userObject = (env: Env, userId: number) => env.USERS.getByName(String(userId));

