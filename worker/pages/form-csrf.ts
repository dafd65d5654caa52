import type { MiddlewareHandler } from 'hono';
import { validCsrf } from '../auth/session';
import type { PageEnv } from '../auth/session';
import { errorPage } from './error-page';

/** A submitted page form's fields, as Hono's parseBody reads them. */
export type FormFields = Record<string, string | File | (string | File)[]>;

/** What a handler behind formCsrf() may read: the form, already checked. */
type FormEnv = PageEnv & { Variables: { form: FormFields } };

interface FormCsrfOptions {
  /** Keep every value of a repeated field (an array), as parseBody's `all`; otherwise the last. */
  all?: boolean;
}

/**
 * CSRF protection for the HTML pages' forms, beside hono/csrf's Origin check: reads the form
 * once, requires its `authenticity_token` (GitLab's field name) to be this browser's session-bound
 * token, compared in constant time, and answers 403 "Form expired" otherwise. A body that cannot
 * be read as a form (multipart without its boundary, say) has no token, so it is refused the
 * same way rather than becoming a 500. The handler reads the parsed form as `c.var.form`.
 *
 * @example
 * pages.post('/users/sign_out', formCsrf(), async (c) => { … c.var.form … })
 */
export const formCsrf = (options: FormCsrfOptions = {}): MiddlewareHandler<FormEnv> => {
  const all = options.all ?? false;
  return async function formCsrf(c, next) {
    let form: FormFields;
    try {
      form = await c.req.parseBody({ all });
    } catch {
      form = {};
    }
    if (!validCsrf(c, form.authenticity_token)) return errorPage(c, 403, 'Form expired', 'Please go back, reload the page and try again.');
    c.set('form', form);
    await next();
  };
};
