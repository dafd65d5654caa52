import { expect } from 'vitest';
import { ORIGIN } from './http';

/** Paths where a browser-facing CORS answer is allowed (token, revocation, userinfo, keys, metadata), at GitLab's and Knock's paths. */
export const CORS_PATHS = new Set([
  '/login/oauth/access_token',
  '/oauth/token',
  '/login/oauth/revoke',
  '/oauth/revoke',
  '/login/oauth/userinfo',
  '/oauth/userinfo',
  '/login/oauth/discovery/keys',
  '/oauth/discovery/keys',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
]);

const MESSAGE_KEYS = new Set(['message']);
const OAUTH_KEYS = new Set(['error', 'error_description', 'scope']);

/**
 * Why `body` is not one of Knock's error shapes (GitLab's and OAuth 2.0's) (`{message: string|object}` or
 * `{error: string, error_description?: string}`), or null when it is.
 */
export const errorShapeProblem = (body: unknown): string | null => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `error body is not an object: ${JSON.stringify(body)}`;
  const keys = Object.keys(body);
  const b = body as Record<string, unknown>;
  if (keys.length > 0 && keys.every((k) => MESSAGE_KEYS.has(k))) {
    return typeof b.message === 'string' || (typeof b.message === 'object' && b.message !== null)
      ? null
      : `message is neither a string nor an object: ${JSON.stringify(body)}`;
  }
  if (keys.length > 0 && keys.every((k) => OAUTH_KEYS.has(k)) && typeof b.error === 'string') {
    if (b.error_description !== undefined && typeof b.error_description !== 'string') return `error_description is not a string: ${JSON.stringify(body)}`;
    if (b.scope !== undefined && typeof b.scope !== 'string') return `scope is not a string: ${JSON.stringify(body)}`;
    return null;
  }
  return `not a contract error shape: ${JSON.stringify(body)}`;
};

/** The pathname a request path reaches (paths may start with `//`, which URL() would read as a host). */
export const pathnameOf = (path: string): string => new URL(`${ORIGIN}${path}`).pathname;

export interface Exchange {
  method: string;
  /** The path as sent (may include a query). */
  path: string;
  res: Response;
}

/** Allowed redirect targets for a request: same origin, or one of the given registered URIs. */
export type RedirectPolicy = (location: URL, exchange: Exchange) => boolean;

export const sameOriginOnly: RedirectPolicy = (location) => location.origin === ORIGIN;

/**
 * Every response, whatever the input, keeps Knock's promises: never a 5xx; JSON errors in
 * GitLab's and OAuth 2.0's shapes with `Content-Type: application/json` exactly; HTML pages with anti-framing
 * headers; no CORS outside the token endpoints; redirects only where the policy allows.
 * Returns the parsed JSON body (or the text) for further checks.
 */
export const expectContract = async (ex: Exchange, redirects: RedirectPolicy = sameOriginOnly): Promise<unknown> => {
  const { res, method, path } = ex;
  const where = `${method} ${path.length > 300 ? `${path.slice(0, 300)}…` : path} → ${res.status}`;
  const text = await res.text();
  expect(res.status, `${where}: ${text.slice(0, 500)}`).toBeLessThan(500);
  const type = res.headers.get('content-type');
  const pathname = pathnameOf(path);

  if (res.headers.has('access-control-allow-origin')) {
    expect(CORS_PATHS.has(pathname), `${where}: CORS header outside the token endpoints`).toBe(true);
  }
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.get('location');
    expect(location, `${where}: redirect without Location`).toBeTruthy();
    const target = new URL(location!, ORIGIN);
    expect(redirects(target, ex), `${where}: redirect to ${location}`).toBe(true);
    return text;
  }
  // RFC 7009: a revocation answers 200 with no body.
  if (res.status === 200 && text === '' && (pathname === '/login/oauth/revoke' || pathname === '/oauth/revoke')) return null;
  if (res.status === 204 || method === 'HEAD') {
    expect(text, `${where}: body on a ${method === 'HEAD' ? 'HEAD' : '204'}`).toBe('');
    return null;
  }
  if (type?.startsWith('text/html')) {
    expect(res.headers.get('x-frame-options'), `${where}: page without X-Frame-Options`).toBe('DENY');
    expect(res.headers.get('content-security-policy') ?? '', `${where}: page without frame-ancestors`).toContain("frame-ancestors 'none'");
    return text;
  }
  if (type?.startsWith('text/css')) {
    expect(res.status, `${where}: CSS error`).toBe(200);
    return text;
  }
  expect(type, `${where}: content type of ${text.slice(0, 200)}`).toBe('application/json');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${where}: body is not JSON: ${text.slice(0, 200)}`);
  }
  if (res.status >= 400) {
    const problem = errorShapeProblem(body);
    expect(problem, `${where}`).toBeNull();
  }
  return body;
};

/** Asserts an exact contract error: status, body and JSON content type. */
export const expectError = async (res: Response, status: number, body?: unknown) => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json');
  const parsed = JSON.parse(text);
  expect(errorShapeProblem(parsed)).toBeNull();
  if (body !== undefined) expect(parsed).toEqual(body);
  return parsed as Record<string, unknown>;
};
