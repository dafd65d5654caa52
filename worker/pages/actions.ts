import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { safeReturnTo } from '../auth/session';
import { describeIssue } from '../api/router';
import { ApiError, problems, raise } from '../errors';
import { problemPage } from './error-page';
import { setFlash } from './flash';
import type { FormFields } from './form-csrf';
import { describeProblem, isRefusal } from './problems';
import type { ConsoleEnv } from './viewer';

/** A text field of a submitted form ('' when absent or a file). */
export const formText = (form: FormFields, name: string): string => {
  const value = form[name];
  return typeof value === 'string' ? value : '';
};

/** Where a form asked to go back to (a path on this site), else `fallback`. */
export const returnTo = (form: FormFields, fallback: string): string => safeReturnTo(form.return_to, fallback);

/**
 * Reads a form with a schema of the API (so a page accepts exactly what the API accepts); the
 * first problem is raised in the API's wording, which `describeProblem` puts beside its field.
 */
export const parseForm = <S extends z.ZodType>(schema: S, input: Record<string, unknown>): z.output<S> => {
  const parsed = schema.safeParse(input);
  return parsed.success ? parsed.data : raise(problems.invalidParam(describeIssue(parsed.error.issues[0])));
};

/** A field the page itself finds wrong (an unknown username, say), in the API's shape. */
export const invalidField = (field: string, message: string): never => raise(problems.badRequest({ [field]: [message] }));

export interface ActionOptions {
  /** Names the form on the page, so its error shows beside it. */
  form: string;
  /** Where to go afterwards (POST-redirect-GET). */
  returnTo: string;
  /** Where to show the error instead, when it is not `returnTo` (the page of something deleted, say). */
  failedReturnTo?: string;
  /** What the person typed, to fill the form in again after an error (never a secret). */
  values?: Record<string, string>;
  /** What a bare "404 Not found" means for this form. */
  notFound?: string;
}

/**
 * Runs a form's action through the services, then redirects (303) to `returnTo` with a notice,
 * or, when the service refused with something the person can fix, with the error beside its
 * field and what they typed. A refusal the page never offered (not permitted, not visible) is
 * an error page with its status, and nothing happened.
 */
export const act = async <E extends ConsoleEnv>(c: Context<E>, options: ActionOptions, op: () => Promise<string>): Promise<Response> => {
  try {
    await setFlash(c, { notice: await op() });
  } catch (e) {
    if (isRefusal(e)) return problemPage(c, e);
    if (!(e instanceof ApiError)) throw e;
    await setFlash(c, { alert: { form: options.form, ...describeProblem(e, options.notFound) }, values: options.values });
    return c.redirect(options.failedReturnTo ?? options.returnTo, 303);
  }
  return c.redirect(options.returnTo, 303);
};
