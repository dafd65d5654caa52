import type { MiddlewareHandler } from 'hono';
import type { BaseEnv, Env } from './env';
import { problems, raise } from './errors';
import { METADATA_PATHS } from './oauth/provider';

/**
 * Secrets without which the Worker cannot serve a request. TOKEN_HASH_KEY keys the hash under
 * which every token, authorization code, session and client secret is stored, so nearly every
 * route needs it. ADMIN_TOKEN is not listed: without it there is simply no bootstrap
 * administrator.
 */
const REQUIRED_SECRETS = ['TOKEN_HASH_KEY'] as const satisfies readonly (keyof Env)[];

/**
 * Paths served without the secrets: static documents that read no token, session or secret
 * (the OpenAPI description, the stylesheet, the provider's metadata).
 */
const SERVED_WITHOUT_SECRETS = new Set(['/api/v4/openapi.json', '/assets/knock.css', ...METADATA_PATHS]);

const missingSecrets = (env: Env): string[] => REQUIRED_SECRETS.filter((name) => !env[name]);

/**
 * Answers 503 naming the first missing secret, before any route can fail half-way with a 500
 * (a deployment where `wrangler secret put` has not been run, or a .dev.vars without the key).
 */
export const requireSecrets: MiddlewareHandler<BaseEnv> = async (c, next) => {
  const [missing] = missingSecrets(c.env);
  if (missing !== undefined && !SERVED_WITHOUT_SECRETS.has(c.req.path)) raise(problems.missingSecret(missing));
  await next();
};
