import { clock, epochSeconds } from '../clock';
import { directory } from '../durable/directory/directory';
import type { AccessTokenFilter, AccessTokenRow, UserRow } from '../durable/directory/types';
import { unwrap } from '../durable/result';
import type { Env } from '../env';
import { problems, raise } from '../errors';
import { hashSecret, newAccessToken } from '../store/tokens';
import type { Window } from './namespaces';

/**
 * Personal access tokens and impersonation tokens (GitLab's personal access tokens API and
 * `/users/:id/impersonation_tokens`): one kind of row in the Directory, which lists them; KV
 * holds each token's record under its keyed hash, as for every access token, so the API checks
 * them with one KV read.
 */

/** What differs between the two kinds; everything else about them is written once, here. */
export interface TokenKind {
  readonly impersonation: boolean;
  /** What an unknown one is called in a 404. */
  readonly label: 'Impersonation Token' | 'Personal Access Token';
  /** The lifetime when no `expires_at` is given. */
  readonly defaultLifetimeDays: number;
}

export const TOKEN_KINDS = {
  impersonation: { impersonation: true, label: 'Impersonation Token', defaultLifetimeDays: 30 },
  // GitLab sets a personal access token without `expires_at` to expire at the longest lifetime allowed.
  personal: { impersonation: false, label: 'Personal Access Token', defaultLifetimeDays: 365 },
} as const satisfies Record<string, TokenKind>;

/** The longest lifetime a token may be given (GitLab's default maximum). */
export const MAX_LIFETIME_DAYS = 365;

export interface TokenRequest {
  name: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt: number;
}

/**
 * Issues a token of `kind` for an active `user`: listed first, then made usable, so no usable
 * token goes unlisted; the Directory writes its KV record in the user's queue, after any change
 * to the user.
 */
export const issueAccessToken = async (env: Env, user: Pick<UserRow, 'id'>, kind: TokenKind, req: TokenRequest): Promise<{ row: AccessTokenRow; token: string }> => {
  const token = newAccessToken(req.expiresAt);
  const tokenHash = await hashSecret(env, token);
  const row = unwrap(await directory(env).issueAccessToken({ userId: user.id, tokenHash, impersonation: kind.impersonation, ...req }));
  return { row, token };
};

export const listAccessTokens = (env: Env, filter: Omit<AccessTokenFilter, 'now'>, page: Window) =>
  directory(env).listAccessTokens({ ...filter, now: epochSeconds() }, page.offset, page.limit);

/** A token by id, with the keyed hash that names it in KV, or null. */
export const getAccessToken = (env: Env, id: number) => directory(env).getAccessToken(id);

/** One of a user's tokens of the given kind, or `404 … Not Found`. */
export const findAccessToken = async (env: Env, userId: number, id: number, kind: TokenKind) => {
  const row = await getAccessToken(env, id);
  if (!row || row.user_id !== userId || row.impersonation !== kind.impersonation) return raise(problems.notFound(kind.label));
  return row;
};

/** Ends a token at once (the Directory writes its tombstone, then marks it revoked). */
export const revokeAccessToken = async (env: Env, token: Pick<AccessTokenRow, 'id'>): Promise<void> => {
  await directory(env).revokeAccessToken(token.id);
};

/** GitLab records a token's use (`last_used_at`) at most this often. */
export const LAST_USED_INTERVAL_MS = 10 * 60 * 1000;
const REMEMBERED_USES = 10_000;
/** When this isolate last recorded each token's use, so a busy token costs one write per interval. */
const recordedUses = new Map<number, number>();

/**
 * Records that a token is being used, unless this isolate did so within the interval. Returns
 * the write (to run after the response; it never rejects), or null when there is none to make.
 */
export const recordTokenUse = (env: Env, tokenId: number): Promise<void> | null => {
  const now = clock.now();
  const last = recordedUses.get(tokenId);
  if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return null;
  if (recordedUses.size >= REMEMBERED_USES) recordedUses.clear();
  recordedUses.set(tokenId, now);
  const at = new Date(now).toISOString();
  const since = new Date(now - LAST_USED_INTERVAL_MS).toISOString();
  return directory(env)
    .touchAccessToken(tokenId, at, since)
    .catch((e: unknown) => {
      // Only a record of use is lost; the next call tries again.
      recordedUses.delete(tokenId);
      console.error('recording a token use failed', e);
    });
};
