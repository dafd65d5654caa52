import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { parseDate, parseEnd, parseInstant } from '../dates';
import { problems, raise } from '../errors';
import { describeIssue } from './router';

/**
 * A request body as GitLab accepts it: JSON, form-encoded or multipart, all described by one
 * schema (which also documents the route). Other content types get 415 from the route.
 */
export const bodyContent = <S extends z.ZodType>(schema: S) => ({
  content: {
    'application/json': { schema },
    'application/x-www-form-urlencoded': { schema },
    'multipart/form-data': { schema },
  },
  required: false,
});

/**
 * GitLab (Rack) reads a form's `name[]` fields as the array `name`, as its docs send them
 * (`--data "scopes[]=api"`): the form is handed to the routes' validators with those names. A
 * form that does not parse is left for the validator to refuse (400).
 */
export const formArrays: MiddlewareHandler = async (c, next) => {
  if (/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(c.req.header('content-type') ?? '')) {
    try {
      const form = await c.req.formData();
      if ([...form.keys()].some((k) => k.endsWith('[]'))) {
        const renamed = new FormData();
        for (const [k, v] of form) renamed.append(k.endsWith('[]') ? k.slice(0, -2) : k, v);
        // Hono's body cache holds the parsed body as a promise (its type says the value), and its
        // form validator reads it from there.
        (c.req.bodyCache as { formData?: Promise<FormData> }).formData = Promise.resolve(renamed);
      }
    } catch {
      delete c.req.bodyCache.formData;
    }
  }
  await next();
};

/** A handler's context whose route validated a JSON or form body of type T (`bodyContent`). */
interface BodyContext<T> {
  req: { header(name: string): string | undefined; valid(target: 'json' | 'form'): T };
}

/** The validated body of a `bodyContent` route; a request without a body is validated as `{}`. */
export const bodyOf = <T>(c: BodyContext<NoInfer<T>>, schema: z.ZodType<T>): T => {
  const contentType = c.req.header('content-type');
  if (!contentType) {
    const parsed = schema.safeParse({});
    return parsed.success ? parsed.data : raise(problems.invalidParam(describeIssue(parsed.error.issues[0])));
  }
  return /json/i.test(contentType) ? c.req.valid('json') : c.req.valid('form');
};

/**
 * A boolean that also accepts the strings form bodies and query strings carry, as GitLab's
 * parameter coercion does (dry-types' `Params::Bool`, any case): python-gitlab sends `True`.
 */
const TRUE_STRINGS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_STRINGS = ['0', 'off', 'f', 'false', 'n', 'no'];
export const boolParam = () =>
  z
    .union([z.boolean(), z.string().refine((v) => [...TRUE_STRINGS, ...FALSE_STRINGS].includes(v.toLowerCase()), { message: 'is invalid' })])
    .transform((v) => v === true || (typeof v === 'string' && TRUE_STRINGS.includes(v.toLowerCase())))
    .openapi({ type: 'boolean' });

/** An integer id path or body parameter. */
export const intParam = () => z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const INVALID = { message: 'is invalid' };

/**
 * A calendar date, `YYYY-MM-DD` that exists (GitLab's `expires_at`), read by worker/dates.ts, or
 * `<name> is invalid`. A check without a transform, so that within a union its issue is the one
 * reported.
 */
export const dateParam = () =>
  z
    .string()
    .refine((v) => parseDate(v) !== null, INVALID)
    .openapi({ type: 'string', format: 'date', example: '2027-01-31' });

/**
 * An instant as GitLab's time filters (`created_after`, `created_before` and the like) take it:
 * an ISO 8601 date, or a date and time with an optional offset, normalised to the stored form
 * (UTC with milliseconds) so it compares as text; read by worker/dates.ts, or `<name> is invalid`.
 */
export const instantParam = () =>
  z
    .string()
    .refine((v) => parseInstant(v) !== null, INVALID)
    .transform((v) => parseInstant(v) ?? v)
    .openapi({ type: 'string', format: 'date-time', example: '2026-11-21T12:00:00Z' });

/**
 * When access should end (`expires_at` of an access request or its approval): a date
 * `YYYY-MM-DD` (00:00 UTC that day, GitLab's memberships), or an ISO 8601 date-time for access
 * measured in hours, kept to the minute; read by worker/dates.ts (`parseEnd`), or `expires_at is
 * invalid`.
 */
export const endParam = () =>
  z
    .string()
    .refine((v) => parseEnd(v) !== null, INVALID)
    .transform((v) => parseEnd(v) ?? v)
    .openapi({ type: 'string', format: 'date-time', description: 'A date (YYYY-MM-DD), or an ISO 8601 date-time kept to the minute', example: '2027-01-31T18:00:00Z' });
