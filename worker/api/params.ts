import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
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

/** The validated body of a `bodyContent` route; a request without a body is validated as `{}`. */
export const bodyOf = <S extends z.ZodType>(c: Context, schema: S): z.output<S> => {
  const contentType = c.req.header('content-type');
  if (!contentType) {
    const parsed = schema.safeParse({});
    if (!parsed.success) raise(problems.invalidParam(describeIssue(parsed.error.issues[0] as never)));
    return (parsed as { data: z.output<S> }).data;
  }
  const req = c.req as unknown as { valid: (t: 'json' | 'form') => unknown };
  return (/json/i.test(contentType) ? req.valid('json') : req.valid('form')) as z.output<S>;
};

/** A boolean that also accepts the strings form bodies and query strings carry. */
export const boolParam = () =>
  z
    .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
    .transform((v) => v === true || v === 'true' || v === '1')
    .openapi({ type: 'boolean' });

/** An integer id path or body parameter. */
export const intParam = () => z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
