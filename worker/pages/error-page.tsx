import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { PageEnv } from '../auth/session';
import { ApiError, transientError } from '../errors';
import { Layout } from './layout';
import { describeProblem } from './problems';

/**
 * An HTML error page (never a redirect): an unknown address, bad OAuth clients, CSRF failures
 * and the like. It has the console's header (the signed-in user and the navigation, when the
 * browser has a session) and a way back.
 */
export const errorPage = (c: Context, status: ContentfulStatusCode, title: string, detail: string) => {
  const session = (c as Context<PageEnv>).var.session ?? null;
  return c.html(
    <Layout title={title} viewer={session ? { user: session.user, csrf: session.csrfToken, waiting: session.waiting } : null}>
      <div class="card">
        <h1>{title}</h1>
        <p>{detail}</p>
        <p>{session ? <a href="/">Back to your dashboard</a> : <a href="/users/sign_in">Go to the sign-in page</a>}</p>
      </div>
    </Layout>,
    status,
  );
};

/** The page of an address where nothing is. */
export const notFoundPage = (c: Context) => errorPage(c, 404, 'Page not found', 'There is no page at this address.');

/** The page for an error that is not about a field: the status, and what it means. */
export const problemPage = (c: Context, e: ApiError) =>
  errorPage(c, e.status, e.status === 404 ? 'Not found' : e.status === 403 ? 'Not allowed' : 'Something is wrong', describeProblem(e, 'There is nothing here.').message);

/**
 * What a browser sees when a page fails, never a JSON body: a problem in its words; the runtime's
 * HTTP errors (a form from another origin, 403; a body too large, 413) by their status; an object
 * that could not answer now, 503; anything else, 500. Each with a way back (`errorPage`).
 */
export const pageError: ErrorHandler = (err, c) => {
  if (err instanceof ApiError) return problemPage(c, err);
  if (err instanceof HTTPException) {
    const forbidden = err.status === 403;
    return errorPage(c, err.status as ContentfulStatusCode, forbidden ? 'Not allowed' : 'Something is wrong', forbidden ? 'This form did not come from this page. Go back, reload the page and try again.' : `The request could not be taken (${err.status}).`);
  }
  const transient = transientError(err);
  if (transient) return problemPage(c, transient);
  console.error('page error', c.req.method, c.req.path, err);
  return errorPage(c, 500, 'Something went wrong', 'Knock could not show this page. Please try again.');
};
