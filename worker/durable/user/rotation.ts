import type { Env } from '../../env';
import { problems } from '../../errors';
import type { SealedTokens } from '../../protocol/sealed-response';
import { tokenResponse, type TokenResponse } from '../../protocol/token-response';
import { accessTokenRecord, type GroupClaims } from '../../store/tokens';
import type { UserSnapshot } from '../directory/types';
import type { RefreshRequest } from './contract';
import { covers, inactiveUser, invalidGrant, isActive, refused, retryOrRevoke } from './grant-rules';
import { pairOf, type FreshTokens } from './new-pair';
import { insertPair, pairRow, scopeList, type Outcome } from './rows';
import { queueTombstones } from './tombstones';

/** An identical retry of a rotated refresh token within this window gets the same answer (see retryOrRevoke). */
export const RETRY_GRACE_SECONDS = 30;

/** What a refresh brings to its transaction: all that is not in storage, made before anything is read. */
export interface RotationInput {
  request: RefreshRequest;
  /** The keyed hash of the presented refresh token. */
  hash: string;
  /** The pair to issue, and its tokens sealed for the identical-retry answer (protocol/sealed-response.ts). */
  fresh: FreshTokens;
  sealed: ArrayBuffer;
  /** The user's group claims, once the transaction asked for them (a grant with `openid`). */
  groups?: GroupClaims;
}

/** A decision, or what the transaction needs first (read outside it, then it runs again): the user, never told this object, or the group claims. */
type RotationOutcome = Outcome | { kind: 'ask'; for: 'user' | 'claims' };

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2), in one transaction: the presented pair is read,
 * judged and rotated, and the new one inserted. `user` is the user as this object was told, if ever.
 */
export const rotate = (sql: SqlStorage, env: Env, input: RotationInput, user: UserSnapshot | null, now: number): RotationOutcome => {
  const { request: r, fresh } = input;
  const current = pairRow(sql, input.hash);
  if (!current || current.user_id !== r.userId) return refused(invalidGrant('The refresh token is invalid, expired or revoked.'));
  if (current.client_id !== r.clientId) return refused(invalidGrant('The refresh token was issued to another client.'));
  const grantScopes = scopeList(current.grant_scopes);
  if (r.scope && !covers(grantScopes, r.scope)) {
    return refused(problems.oauth('invalid_scope', 'The requested scope exceeds the scope granted by the resource owner.'));
  }
  if (!user) return { kind: 'ask', for: 'user' };
  if (!isActive(user)) return refused(inactiveUser());
  if (current.grant_revoked_at || current.state === 'revoked') return refused(invalidGrant('The refresh token has been revoked.'));
  const retryRequest = JSON.stringify([r.clientId, r.scope ? [...r.scope].sort().join(' ') : null]);
  if (current.state === 'rotated') return retryOrRevoke(sql, current, retryRequest, user, now);
  if (current.refresh_expires_at <= now) return refused(invalidGrant('The refresh token has expired.'));
  const scopes = r.scope ?? grantScopes;
  if (scopes.includes('openid') && !input.groups) return { kind: 'ask', for: 'claims' };

  const pair = pairOf(env, fresh, current.client_id, current.grant_id, scopes, input.groups);
  sql.exec(
    `UPDATE token_pairs SET state = 'rotated', successor_hash = ?, retry_request = ?, retry_response = ?, retry_until = ?
     WHERE refresh_hash = ?`,
    pair.refreshHash,
    retryRequest,
    input.sealed,
    now + RETRY_GRACE_SECONDS,
    input.hash,
  );
  insertPair(sql, pair);
  const authentication = { user, authTime: current.auth_time, nonce: null, sid: current.sid };
  // The old pair stops working: its access token's record becomes a tombstone, unless it has
  // expired already (then KV has or soon drops it, and an API call says it expired).
  const ended = current.access_expires_at > now ? [{ hash: current.access_hash, expiresAt: current.access_expires_at }] : [];
  queueTombstones(sql, ended);
  return { kind: 'issued', pair, record: accessTokenRecord(user, pair.token), ended, authentication };
};

/** The answer of an identical retry: the tokens it sealed, the rest from the row of the pair they made. */
export const retryAnswer = (tokens: SealedTokens, successor: { scope: string; createdAt: number; expiresAt: number }): TokenResponse =>
  tokenResponse({ ...tokens, expiresIn: successor.expiresAt - successor.createdAt, scope: successor.scope, createdAt: successor.createdAt });
