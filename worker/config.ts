import type { Env } from './env';

const seconds = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/** Lifetimes and switches from wrangler.toml `[vars]`, with their defaults when unset or invalid. */
export const config = (env: Env) => ({
  accessTokenTtl: seconds(env.ACCESS_TOKEN_TTL_SECONDS, 8 * 3600),
  codeTtl: seconds(env.CODE_TTL_SECONDS, 600),
  refreshTokenTtl: seconds(env.REFRESH_TOKEN_TTL_SECONDS, 30 * 24 * 3600),
  signupEnabled: env.SIGNUP_ENABLED !== 'false',
  extensionRedirectUris: (env.EXTENSION_REDIRECT_URIS ?? '').split(/\s+/).filter(Boolean),
});

/** The public origin: PUBLIC_URL when configured, else the origin the request came to. */
export const publicOrigin = (env: Env, requestUrl: string): string =>
  (env.PUBLIC_URL || new URL(requestUrl).origin).replace(/\/+$/, '');
