import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { secureHeaders } from 'hono/secure-headers';
import { api } from './api';
import { loadSession } from './auth/session';
import { publicOrigin } from './config';
import type { AppEnv } from './env';
import { json, problems, raise, renderError } from './errors';
import { oauthRoutes } from './oauth/routes';
import { accountPages } from './pages/accounts';
import { authorizedApplicationsPages } from './pages/authorized-applications';
import { homePages } from './pages/home';
import { requireSecrets } from './secrets';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Paths served as HTML pages: they get the browser session and origin-checked forms. */
const PAGE_PATHS = ['/', '/users/*', '/oauth/*', '/login/oauth/authorize'];

export const app = new Hono<AppEnv>();

app.use(
  secureHeaders({
    xFrameOptions: 'DENY',
    referrerPolicy: 'strict-origin-when-cross-origin',
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  }),
);
app.use(requireSecrets);
app.use(methodNotAllowed({ app, onMethodNotAllowed: (_c, methods) => raise(problems.methodNotAllowed(methods)) }));
app.use(bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => raise(problems.payloadTooLarge()) }));
for (const path of PAGE_PATHS) {
  app.use(path, csrf({ origin: (origin, c) => origin === new URL(c.req.url).origin || origin === publicOrigin(c.env, c.req.url) }));
  app.use(path, loadSession);
}

app.route('/api/v4', api);
app.route('/', homePages);
app.route('/', accountPages);
app.route('/', oauthRoutes);
app.route('/', authorizedApplicationsPages);

// Returned, not thrown, so methodNotAllowed can still turn it into a 405.
app.notFound(() => json(problems.routeNotFound().body, 404));
app.onError(renderError);
