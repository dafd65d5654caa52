import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { PageEnv } from '../auth/session';
import { Layout } from './layout';

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
