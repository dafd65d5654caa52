import { epochSeconds } from '../clock';
import { directory, type AccessTokenRow, type UserRow } from '../durable/directory';
import type { Env } from '../env';
import { problems, raise } from '../errors';
import { accessTokenRecord, hashSecret, newAccessToken, putAccessToken, revokeAccessTokens } from '../store/tokens';
import type { Window } from './namespaces';

/**
 * Personal access tokens and impersonation tokens (GitLab's personal access tokens API and
 * `/users/:id/impersonation_tokens`). The Directory lists them; KV holds each token's record
 * under its keyed hash, as for every access token, so the API checks them with one KV read.
 */

export interface TokenRequest {
  name: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt: number;
  impersonation: boolean;
}

/** Issues a token for `user`: listed first, then made usable, so no usable token goes unlisted. */
export const issueAccessToken = async (env: Env, user: UserRow, req: TokenRequest): Promise<{ row: AccessTokenRow; token: string }> => {
  const token = newAccessToken(req.expiresAt);
  const tokenHash = await hashSecret(env, token);
  const row = await directory(env).createAccessToken({ userId: user.id, tokenHash, ...req });
  const now = epochSeconds();
  await putAccessToken(env, tokenHash, accessTokenRecord(user, { scopes: req.scopes, clientId: null, grantId: null, createdAt: now, expiresAt: req.expiresAt }));
  return { row, token };
};

export const listAccessTokens = (env: Env, filter: { userId: number; impersonation: boolean; active?: boolean }, page: Window) =>
  directory(env).listAccessTokens({ ...filter, now: epochSeconds() }, page.offset, page.limit);

/** One of a user's tokens of the given kind, or `404 … Not Found`. */
export const findAccessToken = async (env: Env, userId: number, id: number, impersonation: boolean) => {
  const row = await directory(env).getAccessToken(id);
  if (!row || row.user_id !== userId || row.impersonation !== impersonation) {
    return raise(problems.notFound(impersonation ? 'Impersonation Token' : 'Personal Access Token'));
  }
  return row;
};

/**
 * Ends a token at once: KV gets its tombstone first, then the Directory marks it revoked, so a
 * failure in between leaves it listed as active (and a retry revokes it), never usable.
 */
export const revokeAccessToken = async (env: Env, token: AccessTokenRow & { token_hash: string }): Promise<void> => {
  if (!token.revoked) await revokeAccessTokens(env, [{ hash: token.token_hash, expiresAt: token.expires_at }]);
  await directory(env).markAccessTokenRevoked(token.id);
};

/** Whether a token still works at this moment. */
export const isActive = (t: AccessTokenRow): boolean => !t.revoked && t.expires_at > epochSeconds();
