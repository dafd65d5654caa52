import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { clientAddress } from '../edge/client-address';
import { LIMITS, rateLimit } from '../edge/rate-limits';
import type { BaseEnv } from '../env';
import { introspectionEndpoint } from './introspect';
import { metadataEndpoint } from './metadata';
import { revocationEndpoint } from './revoke';
import { tokenEndpoint } from './token';

/**
 * The authorization server's endpoints for clients (RFC 6749 §3.2, RFC 7009, RFC 7662,
 * RFC 8414); the authorization endpoint is a page (oauth/authorize.ts). CORS is allowed where
 * browser-based clients call without cookies, never on the authorization endpoint.
 */
export const oauthRoutes = new Hono<BaseEnv>();

const clientCors = cors({ origin: '*', allowMethods: ['POST', 'GET'], allowHeaders: ['Content-Type', 'Authorization'], maxAge: 86400 });
for (const path of ['/login/oauth/access_token', '/login/oauth/revoke', '/.well-known/oauth-authorization-server']) {
  oauthRoutes.use(path, clientCors);
}

oauthRoutes.post('/login/oauth/access_token', rateLimit(LIMITS.protectedPaths, clientAddress), tokenEndpoint);
oauthRoutes.post('/login/oauth/revoke', revocationEndpoint);
oauthRoutes.post('/login/oauth/introspect', introspectionEndpoint);
oauthRoutes.get('/.well-known/oauth-authorization-server', metadataEndpoint);
