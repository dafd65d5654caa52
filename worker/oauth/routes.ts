import { Hono, type Handler, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { clientAddress } from '../edge/client-address';
import { LIMITS, rateLimit } from '../edge/rate-limits';
import type { BaseEnv } from '../env';
import { introspectionEndpoint } from './introspect';
import { jwksEndpoint } from './jwks';
import { metadataEndpoint } from './metadata';
import { ENDPOINTS, METADATA_PATHS, type Endpoint } from './provider';
import { revocationEndpoint } from './revoke';
import { tokenEndpoint } from './token';
import { userinfoEndpoint } from './userinfo';

/**
 * The provider's endpoints for clients, each handler mounted at every path the provider's table
 * gives it (GitLab's and Knock's); the authorization and end-session endpoints are pages
 * (oauth/authorize.ts, oauth/end-session.ts).
 * `cors`: browser-based clients may call it without cookies (never the authorization endpoint).
 */
const CLIENT_ENDPOINTS: Record<Exclude<Endpoint, 'authorization' | 'endSession'>, { methods: ('GET' | 'POST')[]; before?: MiddlewareHandler<BaseEnv>[]; handler: Handler<BaseEnv>; cors: boolean }> = {
  // Rate-limited by the client's address before the client authenticates (docs/security.md).
  token: { methods: ['POST'], before: [rateLimit(LIMITS.protectedPaths, clientAddress)], handler: tokenEndpoint, cors: true },
  revocation: { methods: ['POST'], handler: revocationEndpoint, cors: true },
  introspection: { methods: ['POST'], handler: introspectionEndpoint, cors: false },
  // OpenID Connect Core 1.0 §5.3.1: GET and POST.
  userinfo: { methods: ['GET', 'POST'], handler: userinfoEndpoint, cors: true },
  jwks: { methods: ['GET'], handler: jwksEndpoint, cors: true },
};

/** Paths where browser-based clients may call (CORS). */
export const CORS_PATHS = [
  ...METADATA_PATHS,
  ...Object.entries(CLIENT_ENDPOINTS).flatMap(([endpoint, e]) => (e.cors ? ENDPOINTS[endpoint as Endpoint] : [])),
];

export const oauthRoutes = new Hono<BaseEnv>();

const clientCors = cors({ origin: '*', allowMethods: ['POST', 'GET'], allowHeaders: ['Content-Type', 'Authorization'], maxAge: 86400 });
for (const path of CORS_PATHS) oauthRoutes.use(path, clientCors);

for (const [endpoint, e] of Object.entries(CLIENT_ENDPOINTS)) {
  for (const path of ENDPOINTS[endpoint as Endpoint]) oauthRoutes.on(e.methods, [path], ...(e.before ?? []), e.handler);
}
for (const path of METADATA_PATHS) oauthRoutes.get(path, metadataEndpoint);
