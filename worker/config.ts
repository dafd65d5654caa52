import { MAX_PBKDF2_ITERATIONS } from './auth/crypto';
import type { Env } from './env';

const seconds = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/** Standard Webhooks' retry schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** A comma-separated list of whole seconds (`WEBHOOK_RETRY_SCHEDULE`), or the default when it is not one. */
const retrySchedule = (value: string | undefined): number[] => {
  const parts = (value ?? '').split(',').map((p) => Number(p.trim()));
  return value && parts.length > 0 && parts.every((n) => Number.isInteger(n) && n >= 0) ? parts : RETRY_SCHEDULE_SECONDS;
};

/**
 * PBKDF2 iterations for new password hashes (`PASSWORD_HASH_ITERATIONS`): a whole number from 1 to
 * the Workers maximum, else that maximum. Tests lower it; stored hashes keep their own count.
 */
const passwordHashIterations = (value: string | undefined): number => {
  const n = Number(value);
  return value && Number.isInteger(n) && n >= 1 && n <= MAX_PBKDF2_ITERATIONS ? n : MAX_PBKDF2_ITERATIONS;
};

/** Lifetimes and switches from wrangler.toml `[vars]`, with their defaults when unset or invalid. */
const readConfig = (env: Env) => ({
  accessTokenTtl: seconds(env.ACCESS_TOKEN_TTL_SECONDS, 8 * 3600),
  codeTtl: seconds(env.CODE_TTL_SECONDS, 600),
  refreshTokenTtl: seconds(env.REFRESH_TOKEN_TTL_SECONDS, 30 * 24 * 3600),
  signupEnabled: env.SIGNUP_ENABLED !== 'false',
  extensionRedirectUris: (env.EXTENSION_REDIRECT_URIS ?? '').split(/\s+/).filter(Boolean),
  /** Webhooks may go to loopback, private and link-local addresses (local development only). */
  allowLocalWebhooks: env.ALLOW_LOCAL_WEBHOOKS === 'true',
  /** A DNS-over-HTTPS resolver (RFC 8484) the webhook URL guard resolves names with; '' for none. */
  dnsResolverUrl: (env.DNS_RESOLVER_URL ?? '').trim(),
  /** The request header carrying the client's address, set by the proxy in front (edge/client-address.ts); '' for none. */
  clientAddressHeader: (env.CLIENT_ADDRESS_HEADER ?? '').trim(),
  /** Seconds to wait before each retry of a webhook delivery; its length is the number of retries. */
  webhookRetrySchedule: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
  passwordHashIterations: passwordHashIterations(env.PASSWORD_HASH_ITERATIONS),
});

type Config = ReturnType<typeof readConfig>;
/** Read once per `env`: a deployment's variables do not change under a running isolate. */
const configs = new WeakMap<Env, Config>();

/** Lifetimes and switches from wrangler.toml `[vars]`, with their defaults when unset or invalid. */
export const config = (env: Env): Config => {
  let read = configs.get(env);
  if (!read) configs.set(env, (read = readConfig(env)));
  return read;
};

/** An http(s) origin as WHATWG URL serialises one: scheme and host in lower case, a port only when not the scheme's default. */
const SERIALISED_ORIGIN = /^(https?):\/\/[a-z0-9.-]+(?::([1-9][0-9]{0,4}))?$/;

/**
 * The origin (RFC 6454 §6.1) of a request's URL: what comes before its path, when that is already
 * an origin as the URL standard writes it (the runtime hands requests' URLs over serialised), so
 * the URL is not parsed again on every call; anything else is parsed.
 */
const originOfRequest = (url: string): string => {
  const end = url.indexOf('/', url.indexOf('://') + 3);
  const head = end < 0 ? url : url.slice(0, end);
  const m = SERIALISED_ORIGIN.exec(head);
  const port = m?.[2] ? Number(m[2]) : null;
  return m && (port === null || (port <= 65535 && port !== (m[1] === 'http' ? 80 : 443))) ? head : new URL(url).origin;
};

/** The public origin: PUBLIC_URL when configured, else the origin the request came to. */
export const publicOrigin = (env: Env, requestUrl: string): string => (env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : originOfRequest(requestUrl));
