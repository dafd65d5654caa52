import type { Context, MiddlewareHandler } from 'hono';
import type { ApiEnv, Caller, Env } from '../env';
import { enforceLimit, LIMITS } from '../edge/rate-limits';
import { problems, raise } from '../errors';
import { directory } from '../durable/directory/directory';
import { missingScopes } from '../oauth/scopes';
import { recordTokenUse } from '../services/access-tokens';
import { callerOf, lookupAccessToken, rootRecord, type AccessTokenRecord } from '../store/tokens';
import { safeEqual } from './crypto';

/** The token a GitLab client sends: `PRIVATE-TOKEN`, or `Authorization: Bearer`. */
export const presentedToken = (headers: Headers): string | null => {
  const privateToken = headers.get('private-token');
  if (privateToken) return privateToken.trim();
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return m ? m[1] : null;
};

/**
 * The built-in administrator behind ADMIN_TOKEN, read from the Directory, which owns it: one
 * object call per call made with the operator's secret, so a rename or any other change to `root`
 * shows on the next call, and no copy of it is kept anywhere.
 */
const root = async (env: Env): Promise<Caller> => callerOf(rootRecord(await directory(env).ensureRoot()));

/** What a token's API limit counts under: the token itself, or its OAuth grant, whose refreshes do not start a new count. */
const limitKey = (r: Pick<AccessTokenRecord, 'tokenId' | 'grantId' | 'userId'>): string =>
  r.tokenId !== null ? `token:${r.tokenId}` : r.grantId ? `grant:${r.grantId}` : `user:${r.userId}`;

/** Counts one API call of a token against GitLab's authenticated API limit (429 once over). */
export const countApiCall = (env: Env, r: Pick<AccessTokenRecord, 'tokenId' | 'grantId' | 'userId'>): Promise<void> => enforceLimit(env, LIMITS.api, limitKey(r));

/** Whether `token` is the operator's ADMIN_TOKEN (compared in constant time). */
export const isAdminToken = (env: Env, token: string): boolean => !!env.ADMIN_TOKEN && safeEqual(token, env.ADMIN_TOKEN);

/** Where the API is mounted; scopes are judged on the path below it. */
const API_PREFIX = '/api/v4';

/** The scopes that would allow this call, or null when `scopes` already do (worker/oauth/scopes.ts). */
export const scopesMissingFor = (c: Context, scopes: readonly string[]) => missingScopes(scopes, c.req.method, c.req.path.slice(API_PREFIX.length));

/**
 * Authenticates every /api/v4 call (GitLab: `PRIVATE-TOKEN` or `Authorization: Bearer`): one KV read per call, or the admin token.
 * Then the token's scopes must allow the call (worker/oauth/scopes.ts), and the use of a personal
 * or impersonation token is recorded after the response (`last_used_at`).
 */
export const apiAuth: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const token = presentedToken(c.req.raw.headers);
  if (!token) return raise(problems.unauthorized());

  let caller: Caller;
  if (isAdminToken(c.env, token)) {
    // The operator's own secret: limiting it would protect nothing from its holder.
    caller = await root(c.env);
  } else {
    const found = await lookupAccessToken(c.env, token);
    if (found.status === 'unknown') return raise(problems.unauthorized());
    if (found.status === 'expired') return raise(problems.tokenExpired());
    if (found.status === 'revoked') return raise(problems.tokenRevoked());
    await countApiCall(c.env, found.record);
    caller = callerOf(found.record);
  }
  const missing = scopesMissingFor(c, caller.scopes);
  if (missing) return raise(problems.insufficientScope(missing));
  if (caller.tokenId !== null) {
    const write = recordTokenUse(c.env, caller.tokenId);
    if (write) c.executionCtx.waitUntil(write);
  }
  c.set('caller', caller);
  await next();
};

/** For routes only an instance administrator may use. */
export const requireAdmin: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!c.var.caller.admin) return raise(problems.forbidden());
  await next();
};
