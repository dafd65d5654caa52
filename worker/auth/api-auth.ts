import type { MiddlewareHandler } from 'hono';
import type { ApiEnv, Caller, Env } from '../env';
import { problems, raise } from '../errors';
import { directory } from '../durable/directory';
import { callerOf, lookupAccessToken, lookupRootRecord, rootRecord } from '../store/tokens';
import { safeEqual } from './crypto';

/** The token a GitLab client sends: `PRIVATE-TOKEN`, or `Authorization: Bearer`. */
export const presentedToken = (headers: Headers): string | null => {
  const privateToken = headers.get('private-token');
  if (privateToken) return privateToken.trim();
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return m ? m[1] : null;
};

/**
 * The built-in administrator behind ADMIN_TOKEN, from its caller record in KV (one read, as for
 * any token), which the Directory writes when it creates `root` and whenever `root` changes, so
 * a rename shows in every isolate on the next call.
 */
const root = async (env: Env): Promise<Caller> => callerOf((await lookupRootRecord(env)) ?? rootRecord(await directory(env).ensureRoot()));

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates every /api/v4 call (GitLab: `PRIVATE-TOKEN` or `Authorization: Bearer`): one KV read per call.
 * `read_api` tokens may only read.
 */
export const apiAuth: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const token = presentedToken(c.req.raw.headers);
  if (!token) return raise(problems.unauthorized());

  let caller: Caller;
  if (c.env.ADMIN_TOKEN && safeEqual(token, c.env.ADMIN_TOKEN)) {
    caller = await root(c.env);
  } else {
    const found = await lookupAccessToken(c.env, token);
    if (found.status === 'unknown') return raise(problems.unauthorized());
    if (found.status === 'expired') return raise(problems.tokenExpired());
    if (found.status === 'revoked') return raise(problems.tokenRevoked());
    caller = callerOf(found.record);
  }
  if (!caller.scopes.includes('api') && !(caller.scopes.includes('read_api') && READ_METHODS.has(c.req.method))) {
    return raise(caller.scopes.includes('read_api') ? problems.insufficientScope() : problems.forbidden());
  }
  c.set('caller', caller);
  await next();
};

/** For routes only an instance administrator may use. */
export const requireAdmin: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!c.var.caller.admin) return raise(problems.forbidden());
  await next();
};
