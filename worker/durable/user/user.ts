import { DurableObject } from 'cloudflare:workers';
import { randomToken } from '../../auth/crypto';
import { clock, epochSeconds, isoNow, todayUtc } from '../../clock';
import { config } from '../../config';
import type { Env } from '../../env';
import { s256 } from '../../protocol/pkce';
import { sessionSid } from '../../protocol/session-id';
import { openTokens, retryKey, sealTokens } from '../../protocol/sealed-response';
import {
  AUTHORIZATION_CODE_PREFIX,
  type GroupClaims,
  accessTokenRecord,
  hashSecret,
  newRoutedSecret,
  putAccessToken,
} from '../../store/tokens';
import { clientHoldersOf } from '../client-holders/client-holders';
import { directory } from '../directory/directory';
import type { UserRow, UserSnapshot } from '../directory/types';
import { claimsLost, groupClaimsOf } from './group-claims';
import { handOverLogouts, LOGOUT_HANDOVER_RETRY_MS, logoutsWaiting, markClaimsLost, pairsWithGroupClaims, queueLogouts, type LogoutReason, type LogoutSelection } from './logouts';
import { syncTokenRecords } from './token-sync';
import { tombstonesWaiting, writeQueuedTombstones, writeTombstones } from './tombstones';
import { inboxCount, inboxVersion, readInbox, takeUpdate, type InboxAnswer, type InboxFilter, type InboxPage, type InboxUpdate, type KnownVersion } from './inbox';
import { USER_SCHEMA } from './schema';
import { hasSecondFactor, TwoFactor } from './two-factor';
import { liveSession, startSession } from './sessions';
import { covers, inactiveUser, invalidGrant, isActive, pkceProblem, refused, refuseReplayedCode } from './grant-rules';
import { migrate } from '../migrations';
import { freshTokens, preparePair } from './new-pair';
import { RETRY_GRACE_SECONDS, retryAnswer, rotate, type RotationInput } from './rotation';
import { fail, ok, type Result } from '../result';
import type { Authorization, CodeRedemption, CodeRequest, InboxPoll, Issued, IssuedCode, RefreshRequest, RefreshTokenInfo, SessionLookup } from './contract';
import { authorizationsOf, cleanUp, codeRow, liveAccessToken, scopeList, insertPair, pairRow, refreshTokenInfo, revokeGrantRows, type Decision, type EndedToken } from './rows';
import { plainRows } from '../plain-rows';

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
  /** `storedUser`'s copy of `user_state`: undefined until read, and again after each write. */
  private stored: UserSnapshot | null | undefined = undefined;
  /** When the alarm that was last set will ring (ms), while it has not rung; null when unknown. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, USER_SCHEMA);
  }

  // ---- the second factor (two-factor.ts) ----

  /** The user's second factor and the sign-ins waiting for it, as an RPC target of its own. */
  twoFactor(userId: number): TwoFactor {
    return new TwoFactor(this.ctx.storage, this.env, userId, {
      createSession: (user, idHash, csrfToken, ttlSeconds) => this.createSession(user, idHash, csrfToken, ttlSeconds),
      activeUser: () => {
        const user = this.storedUser();
        return user && isActive(user) ? user : null;
      },
      armBy: (at) => this.armBy(at),
    });
  }

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

  // ---- the owners' inbox (inbox.ts) ----

  /** An index partition's update of the requests there this user may act on: a delta, or the whole share (inbox.ts). */
  takeInbox(partition: number, update: InboxUpdate): InboxAnswer {
    return this.ctx.storage.transactionSync(() => takeUpdate(this.sql, partition, update, todayUtc()));
  }

  /**
   * An inbox poll's one call: the inbox version and, when `token` names a live access token of
   * grant `grantId` of this user (who may act) by its keyed hash, its scopes, so the API may answer
   * an unchanged poll without the token's KV record (worker/api/inbox.ts).
   */
  pollInbox(token: { grantId: string; accessHash: string } | null): InboxPoll {
    const version = this.ctx.storage.transactionSync(() => inboxVersion(this.sql, todayUtc()));
    const user = this.storedUser();
    if (token === null || !user || !isActive(user)) return { version, token: null };
    const live = liveAccessToken(this.sql, token.grantId, token.accessHash, epochSeconds());
    return { version, token: live && { ...live, admin: user.admin } };
  }

  /** A page of the inbox with its version; only the version while it is `known`. */
  inbox(filter: InboxFilter, offset: number, limit: number, known: KnownVersion): { version: number; page: InboxPage | null } {
    return this.ctx.storage.transactionSync(() => readInbox(this.sql, filter, offset, limit, known, todayUtc()));
  }

  // ---- consent and codes (authorize endpoint) ----

  /** Whether the user already agreed to give this application these scopes (or more). */
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
      cleanUp(this.sql, now);
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
        `INSERT INTO codes (hash, client_id, user_id, redirect_uri, scopes, code_challenge, expires_at, nonce, auth_time, sid)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        hash,
        req.clientId,
        req.userId,
        req.redirectUri,
        scopes,
        req.codeChallenge,
        now + config(this.env).codeTtl,
        req.nonce,
        req.authTime,
        req.sid,
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
  async redeemCode(r: CodeRedemption): Promise<Result<Issued>> {
    const codeHash = await hashSecret(this.env, r.code);
    const seen = codeRow(this.sql, codeHash);
    if (!seen || seen.user_id !== r.userId) return fail(invalidGrant('The authorization code is invalid, expired or already used.'));
    if (!isActive(await this.user(seen.user_id))) return fail(inactiveUser());
    const transformed = r.codeVerifier ? await s256(r.codeVerifier) : '';
    const pair = await preparePair(this.env, () => this.indexPartitions(), seen.user_id, seen.client_id, randomToken('', 16), scopeList(seen.scopes));

    const outcome = this.ctx.storage.transactionSync((): Decision => {
      const now = epochSeconds();
      const user = this.storedUser();
      if (!user || !isActive(user)) return refused(inactiveUser());
      const code = codeRow(this.sql, codeHash);
      if (!code) return refused(invalidGrant('The authorization code is invalid, expired or already used.'));
      if (code.grant_id) return refuseReplayedCode(this.sql, code, now);
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
      const pkce = pkceProblem(code, r, transformed);
      if (pkce) return refused(pkce);

      this.sql.exec(
        'INSERT INTO grants (id, client_id, user_id, scopes, created_at, auth_time, sid, issuer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        pair.grantId,
        code.client_id,
        code.user_id,
        code.scopes,
        isoNow(),
        code.auth_time,
        code.sid,
        r.issuer,
      );
      this.sql.exec('UPDATE codes SET grant_id = ? WHERE hash = ?', pair.grantId, codeHash);
      insertPair(this.sql, pair);
      const authentication = { user, authTime: code.auth_time, nonce: code.nonce, sid: code.sid };
      return { kind: 'issued', pair, record: accessTokenRecord(user, pair.token), ended: [], authentication };
    });
    return this.settle(outcome);
  }

  /**
   * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): a new pair; the presented pair ends. What the
   * rotation needs that storage does not hold is made at once before anything is read, so one
   * transaction reads, decides and writes (rotation.ts); it runs again only after reading what it
   * asked for (the user, never told this object; the group claims of a grant with `openid`).
   */
  async refresh(r: RefreshRequest): Promise<Result<Issued>> {
    const [hash, fresh, key] = await Promise.all([hashSecret(this.env, r.refreshToken), freshTokens(this.env, r.userId), retryKey(this.env, r.refreshToken)]);
    const input: RotationInput = { request: r, hash, fresh, sealed: await sealTokens(key, fresh) };
    let told: UserSnapshot | null = null;
    for (;;) {
      const outcome = this.ctx.storage.transactionSync(() => rotate(this.sql, this.env, input, this.storedUser() ?? told, epochSeconds()));
      if (outcome.kind === 'ask') {
        if (outcome.for === 'user') told = await this.user(r.userId);
        else input.groups = await groupClaimsOf(this.env, this.indexPartitions(), r.userId);
        continue;
      }
      if (outcome.kind === 'retry') {
        const again = await openTokens(key, outcome.sealed);
        if (!again) return fail(invalidGrant('The refresh token has already been used.'));
        return this.settle({ ...outcome.issued, pair: { ...outcome.issued.pair, response: retryAnswer(again, outcome.successor) } });
      }
      // Settled first: its tombstone's alarm is set in the rotation's turn (`tombstone`). The sealed
      // retry answer is kept for the grace window only: the alarm deletes it afterwards.
      const settled = this.settle(outcome);
      if (outcome.kind === 'issued') this.armBy(clock.now() + (RETRY_GRACE_SECONDS + 1) * 1000);
      return settled;
    }
  }

  /**
   * Garbage collection, off the token endpoint's path: expired codes and pairs, and retry answers
   * whose window is over. Rings again for answers still inside their window (a rotation while an
   * earlier alarm was pending relies on it).
   */
  async alarm(): Promise<void> {
    this.alarmAt = null;
    await this.handOverLogouts();
    await writeQueuedTombstones(this.env, this.sql, epochSeconds()).catch(() => this.armBy(clock.now() + LOGOUT_HANDOVER_RETRY_MS));
    const user = this.storedUser();
    if (user) await this.twoFactor(user.id).pushFlag();
    const next = this.ctx.storage.transactionSync(() => {
      cleanUp(this.sql, epochSeconds());
      return this.sql
        .exec<{ until: number | null }>('SELECT MIN(retry_until) AS until FROM token_pairs WHERE retry_response IS NOT NULL')
        .one().until;
    });
    if (next !== null) this.armBy((next + 1) * 1000);
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
    startSession(this.sql, { idHash, csrfToken, ttlSeconds, userVersion: current.version });
    return true;
  }

  /**
   * The session and the user as this object was last told (every change is pushed before it
   * answers), with the count of the inbox read in the same call (so the header costs no call of
   * its own); why it no longer works when the user was blocked or deactivated since; null for no
   * (live) session.
   */
  getSession(idHash: string): SessionLookup {
    const row = liveSession(this.sql, idHash);
    if (!row) return null;
    const user = this.storedUser();
    if (!user || user.state === 'deleted') return null;
    if (user.state !== 'active') return { endedBecause: user.state };
    // Whether the user has a second factor is this object's own fact; the Directory's is a copy.
    const twoFactor = hasSecondFactor(this.sql);
    // Where a group may require a second factor of a user without one (services/two-factor.ts).
    const requirementPartitions = twoFactor ? [] : this.indexPartitions();
    const waiting = this.ctx.storage.transactionSync(() => inboxCount(this.sql, todayUtc()));
    return { user: { ...user, two_factor_enabled: twoFactor }, requirementPartitions, csrfToken: row.csrfToken, signedInAt: row.signedInAt, waiting };
  }

  /**
   * Ends one browser session (signing out; RP-initiated logout). The applications given `openid`
   * in it, but `exceptClient` (the one that asked, ending its own session), get a logout token.
   */
  async deleteSession(idHash: string, exceptClient: string | null): Promise<void> {
    const sid = await sessionSid(idHash);
    // Already ended (signing out everywhere ends this one too): its applications were told then.
    if (this.sql.exec('SELECT 1 FROM sessions WHERE id_hash = ?', idHash).toArray().length === 0) return;
    this.endAccess({ sid, exceptClient }, 'signed_out', () => this.sql.exec('DELETE FROM sessions WHERE id_hash = ?', idHash));
    await this.handOverLogouts();
  }

  /** Ends every browser session of the user ("sign out everywhere"); every application given `openid` is told. */
  async deleteSessions(): Promise<void> {
    this.endAccess({ all: true }, 'signed_out_everywhere', () => this.sql.exec('DELETE FROM sessions'));
    await this.handOverLogouts();
  }

  // ---- back-channel logout (logouts.ts) ----

  /**
   * One transaction: the logouts of `selection` queued, then `change` (which may revoke the grants
   * named), with the alarm set in the same turn while logouts wait to be handed over.
   */
  private endAccess<T>(selection: LogoutSelection | null, reason: LogoutReason, change: () => T): T {
    const result = this.ctx.storage.transactionSync(() => {
      if (selection) queueLogouts(this.sql, selection, reason);
      return change();
    });
    this.armOutboxes();
    return result;
  }

  /** Sets the alarm, in the turn of the transaction that queued them, while logouts or tombstones wait (what a crash leaves). */
  private armOutboxes(): void {
    const at = clock.now() + LOGOUT_HANDOVER_RETRY_MS;
    if ((this.alarmAt === null || this.alarmAt > at) && (logoutsWaiting(this.sql) || tombstonesWaiting(this.sql))) this.armBy(at);
  }

  /** Makes the alarm ring by `at` (ms) in this turn, without asking storage (an earlier one unknown here may move to `at`). */
  private armBy(at: number): void {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  /**
   * Ends `ended` in KV: their tombstones, queued with the change (tombstones.ts), written now; the
   * alarm writes what a crash leaves. Written after the token records this object is still writing
   * (`track`): a tombstone that landed first would be overwritten, and the token would work again.
   */
  private async tombstone(ended: EndedToken[]): Promise<void> {
    if (ended.length === 0) return;
    // Queued with the change that ended them: the alarm, set in this turn, writes what this does not.
    this.armBy(clock.now() + LOGOUT_HANDOVER_RETRY_MS);
    if (this.writes.size > 0) await Promise.allSettled([...this.writes]);
    await writeTombstones(this.env, this.sql, ended);
  }

  /** Hands the queued logouts to their applications' objects; what fails waits for the alarm. */
  private async handOverLogouts(): Promise<void> {
    const userId = Number(this.ctx.id.name);
    if (!Number.isInteger(userId) || (await handOverLogouts(this.env, this.sql, userId))) return;
    console.warn('back-channel logouts could not be handed over; the alarm will retry', this.ctx.id.name);
    this.armBy(clock.now() + LOGOUT_HANDOVER_RETRY_MS);
  }

  /**
   * A membership of the user in a group ended or went down (an index partition says so,
   * index-partition/claim-checks.ts): the application of each live token pair issued with group
   * claims the user no longer has (`claimsLost`) is told, once per pair. The grant stays: its
   * tokens say what they were issued with (docs/oidc.md), and its next refresh or sign-in reads
   * the claims again. Reads the claims as they are now from the user's index partitions: the cost
   * follows the user's grants and partitions, never other users. Only pairs issued before the
   * claims were read are judged by them: a pair issued meanwhile (a refresh) may carry claims read
   * after them, so its gain would look like a loss; the claims are read again for it.
   */
  async checkGroupClaims(): Promise<void> {
    let pairs = pairsWithGroupClaims(this.sql);
    let now: GroupClaims;
    for (;;) {
      if (pairs.length === 0) return;
      const judged = new Set(pairs.map((p) => p.refreshHash));
      now = await this.claimsNow();
      pairs = pairsWithGroupClaims(this.sql);
      if (pairs.every((p) => judged.has(p.refreshHash))) break;
    }
    const lost = pairs.filter((p) => claimsLost(p.groups, now));
    if (lost.length === 0) return;
    this.endAccess({ grantIds: [...new Set(lost.map((p) => p.grantId))] }, 'membership_ended', () => markClaimsLost(this.sql, lost));
    await this.handOverLogouts();
  }

  /** The user's group claims as their index partitions say now. */
  private claimsNow(): Promise<GroupClaims> {
    return groupClaimsOf(this.env, this.indexPartitions(), Number(this.ctx.id.name));
  }

  // ---- revocation and introspection ----

  /** RFC 7009 §2.1: revoking a refresh token ends its grant and every token issued under it. */
  async revokeRefreshToken(refreshToken: string, clientId: string): Promise<void> {
    const pair = pairRow(this.sql, await hashSecret(this.env, refreshToken));
    if (pair) await this.revokeGrant(pair.grant_id, clientId);
  }

  /** Ends one grant (revoking one of its access tokens ends it, as revoking its refresh token does). */
  async revokeGrant(grantId: string, clientId: string): Promise<void> {
    const ended = this.ctx.storage.transactionSync(() => {
      const grant = this.sql.exec<{ client_id: string }>('SELECT client_id FROM grants WHERE id = ?', grantId).toArray()[0];
      return grant && grant.client_id === clientId ? revokeGrantRows(this.sql, grantId, epochSeconds()) : [];
    });
    await this.tombstone(ended);
  }

  /** RFC 7662 for refresh tokens: what an active one is, or null. */
  async describeRefreshToken(refreshToken: string): Promise<RefreshTokenInfo | null> {
    return refreshTokenInfo(pairRow(this.sql, await hashSecret(this.env, refreshToken)), epochSeconds());
  }

  // ---- authorized applications ----

  /** Each application the user has authorized (consented to or holds live tokens for). */
  listAuthorizations(): Authorization[] {
    return authorizationsOf(this.sql, epochSeconds());
  }

  /**
   * Ends everything the user gave an application: its grants and tokens, pending codes and the
   * remembered consent. `forgetIndex` when the application itself is being deleted (its holder
   * index forgets this user too): then no code is issued for it here again.
   */
  async revokeClient(clientId: string, forgetIndex = false): Promise<void> {
    // A deleted application is not told: it has no registration left to deliver to.
    const ended = this.endAccess(forgetIndex ? null : { clientId }, 'authorization_revoked', () => {
      const now = epochSeconds();
      // Revoked ones too: a repeat after a crash before the tombstones must write them again.
      const grants = this.sql.exec<{ id: string }>('SELECT id FROM grants WHERE client_id = ?', clientId).toArray();
      const ended = grants.flatMap((g) => revokeGrantRows(this.sql, g.id, now));
      this.sql.exec('DELETE FROM codes WHERE client_id = ? AND grant_id IS NULL', clientId);
      this.sql.exec('DELETE FROM consents WHERE client_id = ?', clientId);
      if (forgetIndex) {
        this.sql.exec('DELETE FROM indexed_clients WHERE client_id = ?', clientId);
        this.sql.exec('INSERT INTO deleted_clients (client_id) VALUES (?) ON CONFLICT DO NOTHING', clientId);
      }
      return ended;
    });
    await this.tombstone(ended);
    await this.handOverLogouts();
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
    // Applications given `openid` are told when the user may no longer act (selected before the grants end).
    const stopped = snapshot.state !== 'active' && (this.storedUser()?.version ?? 0) < snapshot.version;
    const partitions = this.writingUser(() => this.endAccess(stopped ? { all: true } : null, snapshot.state as Exclude<UserSnapshot['state'], 'active'>, () => {
      // A new password ends the sessions begun before it (also when this is a retry of that push).
      if (endSessions) this.sql.exec('DELETE FROM sessions WHERE user_version < ?', snapshot.version);
      const before = this.storedUser();
      if (this.storeUser(snapshot)) {
        // A blocked or deactivated user's sessions stay, refused, so the next page can say why;
        // becoming active again ends them for good (what a block ended stays ended), as deletion does.
        if (snapshot.state === 'deleted' || (isActive(snapshot) && before !== null && !isActive(before))) this.sql.exec('DELETE FROM sessions');
        if (!isActive(snapshot)) {
          const now = epochSeconds();
          for (const g of this.sql.exec<{ id: string }>('SELECT id FROM grants WHERE revoked_at IS NULL').toArray()) revokeGrantRows(this.sql, g.id, now);
          this.sql.exec('DELETE FROM codes WHERE grant_id IS NULL');
          this.sql.exec('DELETE FROM consents');
        }
      }
      return this.indexPartitions();
    }));
    // The tombstones of the grants just ended, with every other access token KV may still accept.
    await this.syncTokens();
    await this.handOverLogouts();
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

  /** The user as stored (`user_state`). Kept parsed in memory between changes: `storeUser` is the only writer. */
  private storedUser(): UserSnapshot | null {
    if (this.stored === undefined) {
      const row = this.sql.exec<{ snapshot: string }>('SELECT snapshot FROM user_state').toArray()[0];
      this.stored = row ? Object.freeze(JSON.parse(row.snapshot) as UserSnapshot) : null;
    }
    return this.stored;
  }

  /** Runs a transaction that may store the user: `storedUser` reads what it leaves, committed or rolled back. */
  private writingUser<T>(transaction: () => T): T {
    try {
      return transaction();
    } finally {
      this.stored = undefined;
    }
  }

  /** Keeps `snapshot` if it is newer than the stored one; true when it was. */
  private storeUser(snapshot: UserSnapshot): boolean {
    this.stored = undefined;
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
    const run = this.syncing.then(() => syncTokenRecords(this.env, this.sql, () => Promise.allSettled([...this.writes])));
    this.syncing = run.catch(() => undefined);
    return run;
  }

  // ---- helpers ----

  /** Applies a decided outcome to KV: the new access token appears, ended ones become tombstones. */
  private async settle(outcome: Decision): Promise<Result<Issued>> {
    if (outcome.kind === 'refused') {
      await this.tombstone(outcome.ended);
      return fail(outcome.problem);
    }
    const { pair, record } = outcome;
    // Different keys (the ended token's tombstone, the new token): written side by side, and
    // tracked, so that a revocation decided meanwhile (a replayed code, a reused refresh token)
    // or a change of the user writes its tombstone or rewrite after this record, not under it.
    await this.track(Promise.all([this.tombstone(outcome.ended), putAccessToken(this.env, pair.accessHash, record)]));
    const groups = pair.token.groups;
    return ok({ response: pair.response, idToken: groups ? { authentication: outcome.authentication, groups } : null });
  }

}

/** The grant authority of one user. */
export const userObject = (env: Env, userId: number) => env.USERS.getByName(String(userId));

