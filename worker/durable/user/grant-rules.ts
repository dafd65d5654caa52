import { problems, type Problem } from '../../errors';
import { accessTokenRecord } from '../../store/tokens';
import { verifierMatches } from '../../protocol/pkce';
import type { UserRow, UserSnapshot } from '../directory/types';
import type { CodeRedemption } from './contract';
import { pairTokenFacts, revokeGrantRows, type CodeRow, type Decision, type EndedToken, type Outcome, type PairRow } from './rows';

/** The token service's refusals (RFC 6749 §5.2) and the rules of a code's and a refresh token's second use, over a user's rows (rows.ts). */

export const invalidGrant = (description: string) => problems.oauth('invalid_grant', description);
export const inactiveUser = () => invalidGrant('The user of this authorization is no longer active.');
export const refused = (problem: Problem, ended: EndedToken[] = []): Decision => ({ kind: 'refused', problem, ended });
/** Whether `granted` includes every scope `wanted`. */
export const covers = (granted: string[], wanted: string[]) => wanted.every((s) => granted.includes(s));
/** Whether the user may still use their grants. */
export const isActive = (u: UserSnapshot): u is UserRow => u.state === 'active';

/** RFC 7636 §4.6 (and OAuth 2.1: public clients must use PKCE): what is wrong with the exchange's verifier, or null. */
export const pkceProblem = (code: CodeRow, r: CodeRedemption, transformed: string): Problem | null => {
  if (code.code_challenge === null) {
    if (r.codeVerifier) return invalidGrant('code_verifier was sent but the authorization request had no code_challenge.');
    if (r.publicClient) return invalidGrant('Public clients must use PKCE (S256).');
    return null;
  }
  if (!r.codeVerifier) return invalidGrant('code_verifier is required: the authorization request had a code_challenge.');
  if (!verifierMatches(r.codeVerifier, transformed, code.code_challenge)) return invalidGrant('code_verifier does not match the code_challenge.');
  return null;
};

/** RFC 6749 §4.1.2 and §10.5: a code used twice is refused and everything issued from it is revoked. */
export const refuseReplayedCode = (sql: SqlStorage, code: CodeRow, now: number): Decision => {
  const ended = revokeGrantRows(sql, code.grant_id as string, now);
  return refused(invalidGrant('The authorization code has already been used; tokens issued from it have been revoked.'), ended);
};

/**
 * A rotated refresh token presented again (RFC 9700 §4.14.2) means it leaked: the grant ends.
 * Except an identical retry within RETRY_GRACE_SECONDS whose successor is still unused: that is
 * a lost response (the client never saw the new pair), and it gets the same answer again.
 */
export const retryOrRevoke = (sql: SqlStorage, pair: PairRow, retryRequest: string, user: UserRow, now: number): Outcome => {
  const successor = pair.successor_hash
    ? sql
        .exec<{ state: string; groups: string | null; scopes: string; created_at: number; access_hash: string; access_expires_at: number; refresh_expires_at: number }>(
          'SELECT state, groups, scopes, created_at, access_hash, access_expires_at, refresh_expires_at FROM token_pairs WHERE refresh_hash = ?',
          pair.successor_hash,
        )
        .toArray()[0]
    : undefined;
  const identicalRetry =
    pair.retry_response !== null &&
    pair.retry_until !== null &&
    now < pair.retry_until &&
    pair.retry_request === retryRequest &&
    successor?.state === 'active';
  if (identicalRetry) {
    const token = pairTokenFacts(successor, { clientId: pair.client_id, grantId: pair.grant_id });
    const ended = pair.access_expires_at > now ? [{ hash: pair.access_hash, expiresAt: pair.access_expires_at }] : [];
    return {
      kind: 'retry',
      sealed: pair.retry_response as ArrayBuffer,
      successor: { scope: successor.scopes, createdAt: successor.created_at, expiresAt: successor.access_expires_at },
      issued: {
        kind: 'issued',
        pair: { grantId: pair.grant_id, accessHash: successor.access_hash, refreshHash: pair.successor_hash!, refreshExpiresAt: successor.refresh_expires_at, token },
        record: accessTokenRecord(user, token),
        ended,
        authentication: { user, authTime: pair.auth_time, nonce: null, sid: pair.sid },
      },
    };
  }
  const ended = revokeGrantRows(sql, pair.grant_id, now);
  return refused(invalidGrant('The refresh token has already been used; the authorization has been revoked.'), ended);
};
