import type { MiddlewareHandler } from 'hono';
import type { Session } from '../auth/session';
import { safeReturnTo } from '../auth/session';
import type { UserRow } from '../durable/directory/types';
import type { Caller, Env } from '../env';
import { notFoundPage } from './error-page';
import { twoFactorRequirement } from '../services/two-factor';

/** The signed-in person looking at a console page. */
export interface Viewer {
  user: UserRow;
  /** The session's CSRF token, for the forms of the page. */
  csrf: string;
  /** The session's keyed id hash (binds flash messages to this session). */
  sessionIdHash: string;
  /** How many access requests wait in the viewer's inbox (the header's count), read with the session. */
  waiting: number;
}

/**
 * The console's pages: the browser session, the viewer, and the viewer as a caller of the
 * services (`c.var.caller`, as an API handler has it), so pages and API reach the same rules.
 */
export type ConsoleEnv = { Bindings: Env; Variables: { session: Session | null; viewer: Viewer; caller: Caller } };

/** The signed-in user as the services know a caller: what a token with the `api` scope would be. */
const callerOf = (user: UserRow): Caller => ({
  id: user.id,
  username: user.username,
  name: user.name,
  admin: user.admin,
  scopes: ['api'],
  grantId: null,
  tokenId: null,
  profile: { email: user.email, createdAt: user.created_at, twoFactorEnabled: user.two_factor_enabled },
});

/** Where a user sets up a second factor (account-two-factor.tsx): open to a user a group requires one of. */
const TWO_FACTOR_PAGE = '/-/profile/two_factor_auth';

/**
 * Console pages need a signed-in user: anyone else goes to the sign-in page (and, from a GET,
 * comes back afterwards). Runs before any form is read.
 */
export const requireViewer: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const session = c.var.session;
  if (!session) {
    const url = new URL(c.req.url);
    const back = c.req.method === 'GET' ? safeReturnTo(url.pathname + url.search) : '/';
    // Back to `/` is where signing in leads anyway.
    const signIn = back === '/' ? '/users/sign_in' : `/users/sign_in?return_to=${encodeURIComponent(back)}`;
    return c.redirect(signIn, c.req.method === 'GET' ? 302 : 303);
  }
  c.set('viewer', { user: session.user, csrf: session.csrfToken, sessionIdHash: session.idHash, waiting: session.waiting });
  c.set('caller', callerOf(session.user));
  c.header('Cache-Control', 'no-store');
  // A member a group requires a second factor of may only set one up (GitLab's enforcement).
  if (!c.req.path.startsWith(TWO_FACTOR_PAGE) && (await twoFactorRequirement(c.env, session))) return c.redirect(TWO_FACTOR_PAGE, c.req.method === 'GET' ? 302 : 303);
  await next();
};

/**
 * The administration pages exist only for administrators: anyone else gets the 404 page, as
 * GitLab answers its admin area (nothing tells that it is there).
 */
export const requireAdmin: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  if (!c.var.viewer.user.admin) return notFoundPage(c);
  await next();
};

/**
 * What a page's components read of a request (any console route's context is one, with or
 * without a form): the bindings, the viewer, and the address with its query.
 */
export interface PageContext {
  env: Env;
  var: { viewer: Viewer; caller: Caller };
  req: { url: string; query(name: string): string | undefined };
}
