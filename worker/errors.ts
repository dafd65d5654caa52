import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * An error body as GitLab and OAuth 2.0 write them: strings (`message`, `error`,
 * `error_description`), or a message per field (`{"message":{"path":["is invalid"]}}`). Plain
 * data, so a Durable Object can hand one back across RPC.
 */
type FieldMessages = { [field: string]: string[] };
type JsonObject = { [key: string]: string | FieldMessages };

/**
 * An error with the exact status, body and headers a client sees. Rules raise these where they
 * are broken; `renderError` turns them into responses in one place.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: JsonObject,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.message === 'string' ? body.message : String(body.error ?? status));
  }
}

/** Plain-data form of an error, so Durable Objects can return it across RPC. */
export interface Problem {
  status: ContentfulStatusCode;
  body: JsonObject;
  headers?: Record<string, string>;
}

export const raise = (p: Problem): never => {
  throw new ApiError(p.status, p.body, p.headers);
};

/** Every error body a client can see, by name (GitLab's shapes, and OAuth 2.0's). */
export const problems = {
  unauthorized: (): Problem => ({ status: 401, body: { message: '401 Unauthorized' } }),
  tokenExpired: (): Problem => ({
    status: 401,
    body: {
      error: 'invalid_token',
      error_description: 'Token is expired. You can either do re-authorization or token refresh.',
    },
    headers: { 'WWW-Authenticate': 'Bearer realm="Knock", error="invalid_token", error_description="Token is expired"' },
  }),
  tokenRevoked: (): Problem => ({
    status: 401,
    body: { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' },
    headers: { 'WWW-Authenticate': 'Bearer realm="Knock", error="invalid_token", error_description="Token was revoked"' },
  }),
  /** A call outside the token's scopes; `required` are the scopes that would allow it (RFC 6750 §3.1). */
  insufficientScope: (required: readonly string[]): Problem => ({
    status: 403,
    body: {
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: required.join(' '),
    },
    headers: { 'WWW-Authenticate': `Bearer realm="Knock", error="insufficient_scope", scope="${required.join(' ')}"` },
  }),
  /** GitLab's `forbidden!(reason)`: `403 Forbidden`, or `403 Forbidden - <reason>`. */
  forbidden: (reason?: string): Problem => ({ status: 403, body: { message: reason ? `403 Forbidden - ${reason}` : '403 Forbidden' } }),
  /** GitLab's `render_api_error!(message, status)`: the message as it is, with its status. */
  refused: (status: 403 | 409 | 422, message: string): Problem => ({ status, body: { message } }),
  notFound: (what?: string): Problem => ({ status: 404, body: { message: what ? `404 ${what} Not Found` : '404 Not found' } }),
  routeNotFound: (): Problem => ({ status: 404, body: { error: '404 Not Found' } }),
  methodNotAllowed: (allow: string[]): Problem => ({
    status: 405,
    body: { error: '405 Method Not Allowed' },
    headers: { Allow: allow.join(', ') },
  }),
  badRequest: (message: string | FieldMessages): Problem => ({ status: 400, body: { message } }),
  /** GitLab's FutureDateValidator (app/validators/future_date_validator.rb): an `expires_at` before today. */
  pastDate: (): Problem => ({ status: 400, body: { message: { expires_at: ['cannot be a date in the past'] } } }),
  /** GitLab's shape for a parameter that failed validation: `{"error": "<param> is invalid"}`. */
  invalidParam: (error: string): Problem => ({ status: 400, body: { error } }),
  conflict: (message: string | FieldMessages): Problem => ({ status: 409, body: { message } }),
  /** GitLab's answer when a request was understood but could not be carried out (a hook test that failed). */
  unprocessable: (message: string): Problem => ({ status: 422, body: { message } }),
  payloadTooLarge: (): Problem => ({ status: 413, body: { error: '413 Payload Too Large' } }),
  unsupportedMediaType: (): Problem => ({
    status: 415,
    body: { error: '415 Unsupported Media Type: send application/json, application/x-www-form-urlencoded or multipart/form-data' },
  }),
  /**
   * An OAuth 2.0 error (RFC 6749 §5.2, RFC 7009, RFC 7662): `{"error","error_description"}`,
   * never cached. `invalid_client` is 401.
   */
  oauth: (error: string, description: string, status: ContentfulStatusCode = 400, headers: Record<string, string> = {}): Problem => ({
    status,
    body: { error, error_description: description },
    headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers },
  }),
  /**
   * A secret the deployment needs has not been set (`wrangler secret put`, or .dev.vars locally):
   * 503 (RFC 9110 §15.6.4), as the service cannot work until an operator sets it.
   */
  missingSecret: (name: string): Problem => ({
    status: 503,
    body: { message: `503 Service Unavailable: the secret ${name} is not configured (wrangler secret put ${name})` },
    headers: { 'Cache-Control': 'no-store' },
  }),
  /** The service could not finish now and will on its own; the client may retry (RFC 9110 §15.6.4). */
  unavailable: (message: string): Problem => ({ status: 503, body: { message: `503 Service Unavailable: ${message}` }, headers: { 'Retry-After': '10' } }),
  /** Over a rate limit (RFC 6585 §4): GitLab's throttles say "Retry later", its endpoint limits more. */
  tooManyRequests: (retryAfter: number, message = 'Retry later'): Problem => ({
    status: 429,
    body: { message },
    headers: { 'Retry-After': String(retryAfter) },
  }),
};

/**
 * A Durable Object call the runtime marks as worth retrying: its error's `retryable` (the object
 * restarted, its connection was lost) or `overloaded` (too many requests queued for it). The
 * service is briefly unavailable, not broken: 503 with Retry-After (RFC 9110 §15.6.4), not 500.
 */
export const transientError = (err: unknown): ApiError | null => {
  const flags = typeof err === 'object' && err !== null ? (err as { retryable?: unknown; overloaded?: unknown }) : {};
  if (flags.retryable !== true && flags.overloaded !== true) return null;
  const problem = problems.unavailable('the request could not be completed now; try again');
  return new ApiError(problem.status, problem.body, problem.headers);
};

/** JSON with exactly `application/json`, as GitLab sends it. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(body === null ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

export const renderError = (err: Error, c: Context): Response => {
  if (err instanceof ApiError) return json(err.body, err.status, err.headers);
  if (err instanceof HTTPException) {
    if (err.status === 413) return renderError(new ApiError(413, problems.payloadTooLarge().body), c);
    // A body of a type the route does not take (@hono/zod-openapi's media type check).
    if (err.status === 415) return renderError(new ApiError(415, problems.unsupportedMediaType().body), c);
    return json({ error: `${err.status} ${err.message || 'Error'}` }, err.status);
  }
  const transient = transientError(err);
  if (transient) {
    console.warn('a Durable Object could not answer; the client may retry', c.req.method, new URL(c.req.url).pathname, err);
    return renderError(transient, c);
  }
  console.error('unhandled error', c.req.method, new URL(c.req.url).pathname, err);
  return json({ error: '500 Internal Server Error' }, 500);
};
