// One error type for every failed call to Knock, with the server's own words as its message.

import type { ErrorBody } from './api-types';

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    message: string,
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The OAuth `error` code (`invalid_grant`, `invalid_token`, ...), when the server sent one. */
    readonly code?: string,
    /** Seconds to wait before trying again, from `Retry-After` (429 and 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Turns a non-2xx response into an ApiError carrying the server's message. */
export async function apiErrorFrom(response: Response): Promise<ApiError> {
  const body = await response.json().catch(() => ({}) as ErrorBody) as ErrorBody;
  return new ApiError(
    describeErrorBody(body) ?? `${response.status} ${response.statusText || 'Error'}`.trim(),
    response.status,
    typeof body.error === 'string' ? body.error : undefined,
    parseRetryAfter(response.headers.get('Retry-After')),
  );
}

/** `{"message":"403 Forbidden"}`, `{"message":{"user_id":["already exists in source"]}}`, `{"error":...}`. */
function describeErrorBody(body: ErrorBody | null | undefined): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  if (typeof body.message === 'string') return body.message;
  if (body.message && typeof body.message === 'object') {
    return Object.entries(body.message as Record<string, unknown>)
      .map(([field, problems]) => `${field} ${([] as unknown[]).concat(problems).join(', ')}`)
      .join('; ');
  }
  if (typeof body.error_description === 'string') return body.error_description;
  if (typeof body.error === 'string') return body.error;
  return undefined;
}

/** RFC 9110 §10.2.3: delay-seconds or an HTTP-date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
