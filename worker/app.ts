import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { secureHeaders } from 'hono/secure-headers';
import { api } from './api';
import { loadSession } from './auth/session';
import { publicOrigin } from './config';
import type { PageEnv } from './auth/session';
import type { BaseEnv } from './env';
import { json, problems, raise, renderError } from './errors';
import { authorizeRoutes } from './oauth/authorize';
import { endSessionRoutes } from './oauth/end-session';
import { DEVICE_VERIFICATION_PATH, ENDPOINTS } from './oauth/provider';
import { oauthRoutes } from './oauth/routes';
import { accountPages } from './pages/accounts';
import { authorizedApplicationsPages } from './pages/authorized-applications';
import { CONSOLE_PATHS, consolePages } from './pages/console';
import { devicePages } from './pages/device';
import { pageError } from './pages/error-page';
import { homePages } from './pages/home';
import { topLevelPages, wantsPage } from './pages/top-level';
import { requirePartitionCount } from './middleware/partition-count';
import { requireSecrets } from './secrets';

const MAX_BODY_BYTES = 1024 * 1024;

/** The request's execution context, when the runtime gave one (Hono's getter throws otherwise). */
const executionContextOf = (c: Context): Context['executionCtx'] | undefined => {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
};

/**
 * Paths served as HTML pages: they get the browser session and origin-checked forms. Each page
 * form's POST route also checks the form's session-bound token with formCsrf (pages/form-csrf.ts).
 */
const PAGE_PATHS = [...new Set([...CONSOLE_PATHS, '/users/*', '/oauth/authorized_applications', '/oauth/authorized_applications/*', ...ENDPOINTS.authorization, DEVICE_VERIFICATION_PATH])];

export const app = new Hono<BaseEnv>();

app.use(
  secureHeaders({
    xFrameOptions: 'DENY',
    referrerPolicy: 'strict-origin-when-cross-origin',
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      styleSrc: ["'self'"],
      // Only /assets/webauthn.js (pages/webauthn-script.ts): no inline script runs.
      scriptSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  }),
);
app.use(requireSecrets);
app.use(requirePartitionCount);
app.use(methodNotAllowed({ app, onMethodNotAllowed: (_c, methods) => raise(problems.methodNotAllowed(methods)) }));
app.use(bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => raise(problems.payloadTooLarge()) }));

/** The HTML pages: the only routes with a browser session. */
const pages = new Hono<PageEnv>();
for (const path of PAGE_PATHS) {
  pages.use(path, csrf({ origin: (origin, c) => origin === new URL(c.req.url).origin || origin === publicOrigin(c.env, c.req.url) }));
  pages.use(path, loadSession);
}
pages.route('/', homePages);
pages.route('/', accountPages);
// The end-session endpoint takes relying parties' cross-site GETs and POSTs (RP-Initiated Logout
// 1.0 §2), so no Origin check: it ends a session only on a valid id_token_hint or its own form's
// session-bound token (oauth/end-session.ts).
for (const path of ENDPOINTS.endSession) pages.use(path, loadSession);
pages.route('/', authorizeRoutes);
pages.route('/', endSessionRoutes);
pages.route('/', authorizedApplicationsPages);
pages.route('/', devicePages);
pages.route('/', consolePages);

app.route('/api/v4', api);
app.route('/', pages);
app.route('/', oauthRoutes);

/** The first path segments of the routes above (`api`, `users`, `-`, ...): GitLab reserves them too. */
let reserved: Set<string> | undefined;
const isReserved = (segment: string) => (reserved ??= new Set(app.routes.map((r) => r.path.split('/')[1]?.toLowerCase() ?? ''))).has(segment.toLowerCase());
const topLevel = topLevelPages(isReserved);

// What no route above answers: for a browser, GitLab's top-level pages (`/acme/website`, `/bob`)
// or the 404 page; for any other client GitLab's JSON. Returned, not thrown, so methodNotAllowed
// can still turn it into a 405.
app.notFound((c) => (wantsPage(c) ? topLevel.fetch(c.req.raw, c.env, executionContextOf(c)) : json(problems.routeNotFound().body, 404)));
// A browser asking for a page gets an HTML page with a way back, whatever failed (a middleware
// above the pages too: a missing secret, a body too large); every other client GitLab's JSON.
app.onError((err, c) => (wantsPage(c) && !c.req.path.startsWith('/api/') ? pageError(err, c) : renderError(err, c)));
