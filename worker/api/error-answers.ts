import { z } from '@hono/zod-openapi';
import { problems, type Problem } from '../errors';
import { LIMITS } from '../edge/rate-limits';
import { missingScopes } from '../oauth/scopes';

/**
 * The error answers of /api/v4 in its OpenAPI document, written in one place from what raises
 * them: the bodies are `problems` (worker/errors.ts), and which operation answers which status
 * follows from what stands in front of it (`errorStatusesOf`): the token check (api-auth.ts), the
 * scopes (oauth/scopes.ts), the parameter validation (router.ts), the body limit and the media
 * types a body may have. What a route raises beyond that, it declares in its `responses` with
 * `raises`.
 */

/**
 * GitLab's error body: `{"message": "…"}` or a message per field, or `{"error": "…"}` for a
 * parameter (https://docs.gitlab.com/api/rest/troubleshooting/), or OAuth 2.0's
 * `{"error", "error_description"}` (RFC 6750 §3).
 */
export const ErrorSchema = z
  .union([
    z.object({ message: z.union([z.string(), z.record(z.string(), z.array(z.string()))]) }),
    z.object({ error: z.string(), error_description: z.string().optional(), scope: z.string().optional() }),
  ])
  .openapi('Error', { description: "GitLab's error body: a message (or a message per field), or an OAuth 2.0 error" });

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503;

/** What each status means here, with bodies as `problems` makes them. */
export const ERROR_ANSWERS: Readonly<Record<ErrorStatus, { description: string; examples: Record<string, Problem> }>> = {
  400: {
    description: 'A parameter is missing or invalid, or the request breaks a rule of the data',
    examples: { invalid: problems.invalidParam('access_level is missing'), rule: problems.pastDate() },
  },
  401: {
    description: 'No token, or an unknown, expired or revoked one',
    examples: { unauthorized: problems.unauthorized(), expired: problems.tokenExpired(), revoked: problems.tokenRevoked() },
  },
  403: {
    description: "Not permitted to the caller, or outside the token's scopes",
    examples: { forbidden: problems.forbidden(), scope: problems.insufficientScope(['api']) },
  },
  404: {
    description: 'Not found, or not visible to the caller',
    examples: { group: problems.notFound('Group'), user: problems.notFound('User'), plain: problems.notFound() },
  },
  409: { description: 'Conflicts with what exists', examples: { member: problems.conflict('Member already exists') } },
  413: { description: 'The body is over 1 MB', examples: { large: problems.payloadTooLarge() } },
  415: { description: 'The body is neither JSON nor a form', examples: { type: problems.unsupportedMediaType() } },
  422: { description: 'Understood, but it could not be carried out', examples: { hook: problems.unprocessable('Hook execution failed: HTTP 500') } },
  429: {
    description: 'Over a rate limit (docs/security.md): retry after `Retry-After` seconds',
    examples: { api: LIMITS.api.problem, endpoint: LIMITS.accessRequests.problem },
  },
  503: {
    description: 'Saved, and what follows from it is still being brought up to date; retry later',
    examples: { unavailable: problems.unavailable("The change is saved; bringing the user's sign-in, sessions and tokens up to date is being retried") },
  },
};

/**
 * Errors a route raises beyond those its shape implies, for its `responses`:
 * `responses: { 201: …, ...raises(409) }`. The document gives each its body.
 */
export const raises = (...statuses: ErrorStatus[]): Partial<Record<ErrorStatus, { description: string }>> =>
  Object.fromEntries(statuses.map((status) => [status, { description: ERROR_ANSWERS[status].description }]));

interface Parameter {
  in: string;
  schema?: Record<string, unknown>;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: unknown;
  security?: unknown[];
  responses?: Record<string, { description?: string; content?: unknown }>;
}

/** A parameter any text satisfies (a plain string) cannot fail validation. */
const mayBeInvalid = (p: Parameter): boolean => {
  const s = p.schema ?? {};
  return s.type !== 'string' || ['format', 'pattern', 'enum', 'minLength', 'maxLength'].some((k) => k in s) || p.in === 'path';
};

/**
 * The statuses an operation answers by its shape: 401 when it needs a token (all but those that
 * say `security: []`), and 429 then too (the API's limit per token, worker/edge/rate-limits.ts); 403 when a token of some scope may not call it; 400 when a parameter or
 * the body may be invalid; 404 when it names something in its path; 413 and 415 when it takes
 * a body.
 */
const errorStatusesOf = (method: string, path: string, op: Operation): ErrorStatus[] => {
  const statuses: ErrorStatus[] = [];
  if (!(Array.isArray(op.security) && op.security.length === 0)) {
    statuses.push(401, 429);
    if (missingScopes(['read_api'], method.toUpperCase(), path) || missingScopes(['read_user'], method.toUpperCase(), path)) statuses.push(403);
  }
  if (op.requestBody || (op.parameters ?? []).some(mayBeInvalid)) statuses.push(400);
  if ((op.parameters ?? []).some((p) => p.in === 'path')) statuses.push(404);
  if (op.requestBody) statuses.push(413, 415);
  return statuses;
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** GitLab's error answers added to every operation of an OpenAPI document of /api/v4 (see above). */
export const withErrorAnswers = <D extends { paths?: object }>(doc: D): D => {
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, object][]) {
    for (const [method, value] of Object.entries(item)) {
      const op = value as Operation;
      if (!op.responses) continue;
      const declared = Object.keys(op.responses).map(Number).filter((s): s is ErrorStatus => s in ERROR_ANSWERS);
      for (const status of new Set([...errorStatusesOf(method, path, op), ...declared])) {
        const { description, examples } = ERROR_ANSWERS[status];
        op.responses[status] = {
          description: op.responses[status]?.description ?? description,
          content: { 'application/json': { schema: ERROR_REF, examples: Object.fromEntries(Object.entries(examples).map(([name, p]) => [name, { value: p.body }])) } },
        };
      }
    }
  }
  return doc;
};
