import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { AppEnv } from '../env';
import { authorizeRoutes } from './authorize';
import { introspectionEndpoint } from './introspect';
import { metadataEndpoint } from './metadata';
import { revocationEndpoint } from './revoke';
import { tokenEndpoint } from './token';

/**
 * The authorization server (contract §5). CORS is allowed where browser-based clients call
 * without cookies (token, revocation, metadata), never on the authorization endpoint.
 */
export const oauthRoutes = new Hono<AppEnv>();

const clientCors = cors({ origin: '*', allowMethods: ['POST', 'GET'], allowHeaders: ['Content-Type', 'Authorization'], maxAge: 86400 });
for (const path of ['/login/oauth/access_token', '/login/oauth/revoke', '/.well-known/oauth-authorization-server']) {
  oauthRoutes.use(path, clientCors);
}

oauthRoutes.route('/', authorizeRoutes);
oauthRoutes.post('/login/oauth/access_token', tokenEndpoint);
oauthRoutes.post('/login/oauth/revoke', revocationEndpoint);
oauthRoutes.post('/login/oauth/introspect', introspectionEndpoint);
oauthRoutes.get('/.well-known/oauth-authorization-server', metadataEndpoint);
