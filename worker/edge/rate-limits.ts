import type { Context, MiddlewareHandler } from 'hono';
import type { Env } from '../env';
import { problems, raise, type Problem } from '../errors';

/**
 * Knock's rate limits. Each is a Workers Rate Limiting binding in wrangler.toml's `[[ratelimits]]`,
 * whose `simple = { limit, period }` (a period of 10 or 60 seconds, counted per Cloudflare
 * location) is where its number is set; docs/security.md lists them with their defaults. A
 * runtime that binds no limiter (the bench's and the soak's Miniflare) limits nothing.
 */

/** The names of the Env's rate-limit bindings, as `wrangler types` generates them. */
type LimiterBinding = { [K in keyof Env]-?: NonNullable<Env[K]> extends RateLimit ? K : never }[keyof Env];

interface Limit {
  binding: LimiterBinding;
  /** The answer once over the limit, in GitLab's words. */
  problem: Problem;
}

/**
 * A binding's window is fixed, 10 or 60 seconds, and it does not say when it turns: within 60
 * seconds a request counts against a fresh one (RFC 9110 §10.2.3).
 */
const RETRY_AFTER_SECONDS = 60;
/** GitLab's throttles (Rack::Attack) answer "Retry later". */
const throttled = problems.tooManyRequests(RETRY_AFTER_SECONDS);
/** GitLab's limits on one endpoint (`Gitlab::ApplicationRateLimiter`) answer this. */
const endpointThrottled = problems.tooManyRequests(RETRY_AFTER_SECONDS, 'This endpoint has been requested too many times. Try again later.');

export const LIMITS = {
  /** Sign-in, sign-up and the token endpoint, per client address: GitLab's protected paths. */
  protectedPaths: { binding: 'LIMIT_PROTECTED_PATHS', problem: throttled },
  /** The token endpoint, per confidential client once it has authenticated. */
  oauthClient: { binding: 'LIMIT_OAUTH_CLIENT', problem: throttled },
  /** /api/v4, per token: GitLab's authenticated API limit. */
  api: { binding: 'LIMIT_API', problem: throttled },
  /** New access requests, per requester: owners are not to be flooded. */
  accessRequests: { binding: 'LIMIT_ACCESS_REQUESTS', problem: endpointThrottled },
  /** `POST …/hooks/:id/test`, per hook: each sends a request from Knock (GitLab's `project_testing_hook`). */
  hookTests: { binding: 'LIMIT_HOOK_TESTS', problem: endpointThrottled },
  /** A device's polls of the token endpoint (RFC 8628 §3.4), per client address. */
  devicePolls: { binding: 'LIMIT_DEVICE_POLLS', problem: throttled },
  /** Codes entered on the device verification page, per user: RFC 8628 §5.1's limit on guesses. */
  deviceUserCodes: { binding: 'LIMIT_DEVICE_USER_CODES', problem: throttled },
} as const satisfies Record<string, Limit>;

/** Counts one request under `key`; false once `limit` is used up for now. */
const withinLimit = async (env: Env, limit: Limit, key: string): Promise<boolean> => {
  const limiter: RateLimit | undefined = env[limit.binding];
  return !limiter || (await limiter.limit({ key })).success;
};

/** Counts one request under `key`, and answers GitLab's 429 with `Retry-After` once over. */
export const enforceLimit = async (env: Env, limit: Limit, key: string): Promise<void> => {
  if (!(await withinLimit(env, limit, key))) raise(limit.problem);
};

/**
 * The same before a route, keyed by what the request says (null: nothing to count it under).
 * `page` answers a browser instead of the JSON error, with the same status and `Retry-After`.
 */
export const rateLimit =
  <E extends { Bindings: Env }>(limit: Limit, keyOf: (c: Context<E>) => string | null, page?: (c: Context<E>) => Response | Promise<Response>): MiddlewareHandler<E> =>
  async (c, next) => {
    const key = keyOf(c);
    if (key !== null && !(await withinLimit(c.env, limit, key))) {
      if (!page) return raise(limit.problem);
      c.header('Retry-After', String(RETRY_AFTER_SECONDS));
      return page(c);
    }
    await next();
  };
