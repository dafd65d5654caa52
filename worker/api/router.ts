import { OpenAPIHono } from '@hono/zod-openapi';
import type { Env as HonoEnv } from 'hono';
import type { ApiEnv } from '../env';
import { problems, raise } from '../errors';

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  /** A union's issues, per option. */
  errors?: Issue[][];
}

/** Nothing was sent: every option of a union found nothing either. */
const isMissing = (issue: Issue): boolean =>
  (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) ||
  (issue.code === 'invalid_union' && !!issue.errors?.length && issue.errors.every((option) => option.some(isMissing)));

/**
 * GitLab's wording for a parameter that failed validation: "<name> is missing",
 * "<name> does not have a valid value", or "<name> is invalid".
 */
export const describeIssue = (issue: Issue): string => {
  const name = issue.path.map(String).join('.') || 'body';
  if (isMissing(issue)) return `${name} is missing`;
  if (issue.code === 'custom' && issue.message) return `${name} ${issue.message}`;
  if (issue.code === 'invalid_value' || issue.code === 'invalid_union') return `${name} does not have a valid value`;
  return `${name} is invalid`;
};

/** A router whose schemas both validate input (400 in GitLab's shape) and document the API. */
export const createRouter = <E extends HonoEnv>() =>
  new OpenAPIHono<E>({
    defaultHook: (result) => {
      if (!result.success) raise(problems.invalidParam(describeIssue(result.error.issues[0])));
    },
  });

/** A router of /api/v4 behind authentication: every handler has `c.var.caller`. */
export const createApiRouter = () => createRouter<ApiEnv>();
