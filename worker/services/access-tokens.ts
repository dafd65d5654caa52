import { epochSeconds } from '../clock';
import { directory, type AccessTokenRow, type UserRow } from '../durable/directory';
import type { Env } from '../env';
import { problems, raise } from '../errors';
import { unwrap } from '../durable/result';
import { hashSecret, newAccessToken } from '../store/tokens';
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

/**
 * Issues a token for an active `user`: listed first, then made usable, so no usable token goes
 * unlisted; the Directory writes its KV record in the user's queue, after any change to the user.
 */
export const issueAccessToken = async (env: Env, user: Pick<UserRow, 'id'>, req: TokenRequest): Promise<{ row: AccessTokenRow; token: string }> => {
  const token = newAccessToken(req.expiresAt);
  const tokenHash = await hashSecret(env, token);
  const row = unwrap(await directory(env).issueAccessToken({ userId: user.id, tokenHash, ...req }));
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

/** Ends a token at once (the Directory writes its tombstone, then marks it revoked). */
export const revokeAccessToken = async (env: Env, token: Pick<AccessTokenRow, 'id'>): Promise<void> => {
  await directory(env).revokeAccessToken(token.id);
};

/** Whether a token still works at this moment. */
export const isActive = (t: AccessTokenRow): boolean => !t.revoked && t.expires_at > epochSeconds();
