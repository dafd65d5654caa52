import { Hono, type Context, type Handler, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { clientAddress } from '../edge/client-address';
import { LIMITS, rateLimit } from '../edge/rate-limits';
import type { BaseEnv } from '../env';
import { DEVICE_CODE_GRANT } from '../protocol/device-codes';
import { deviceAuthorizationEndpoint } from './device-authorization';
import { introspectionEndpoint } from './introspect';
import { jwksEndpoint } from './jwks';
import { metadataEndpoint } from './metadata';
import { ENDPOINTS, METADATA_PATHS, type Endpoint } from './provider';
import { readOAuthParams } from './request-params';
import { revocationEndpoint } from './revoke';
import { tokenEndpoint } from './token';
import { userinfoEndpoint } from './userinfo';

const addressLimit = rateLimit<BaseEnv>(LIMITS.protectedPaths, clientAddress);
const devicePollLimit = rateLimit<BaseEnv>(LIMITS.devicePolls, clientAddress);

/**
 * The token endpoint's limit per client address; a device's polls have a budget of their own:
 * RFC 8628 §3.5 has a device poll every `interval` seconds (twelve a minute at five), which would
 * spend the address's budget of sign-ins and code exchanges, and each device code's `slow_down`
 * (durable/device-authorizations/) throttles one device. A body that cannot be read counts as
 * any other request (the handler then refuses it).
 */
const tokenAddressLimit: MiddlewareHandler<BaseEnv> = async (c: Context<BaseEnv>, next) => {
  const devicePoll = await readOAuthParams(c).then(
    (params) => params.grant_type === DEVICE_CODE_GRANT,
    () => false,
  );
  return (devicePoll ? devicePollLimit : addressLimit)(c, next);
};

/**
 * The provider's endpoints for clients, each handler mounted at every path the provider's table
 * gives it (GitLab's and Knock's); the authorization and end-session endpoints are pages
 * (oauth/authorize.ts, oauth/end-session.ts).
 * `cors`: browser-based clients may call it without cookies (never the authorization endpoint).
 */
const CLIENT_ENDPOINTS: Record<Exclude<Endpoint, 'authorization' | 'endSession'>, { methods: ('GET' | 'POST')[]; before?: MiddlewareHandler<BaseEnv>[]; handler: Handler<BaseEnv>; cors: boolean }> = {
  // Rate-limited by the client's address before the client authenticates (docs/security.md).
  token: { methods: ['POST'], before: [tokenAddressLimit], handler: tokenEndpoint, cors: true },
  // RFC 8628 §3.1, for devices (command-line tools), not browsers: no CORS. Limited as the token endpoint.
  deviceAuthorization: { methods: ['POST'], before: [addressLimit], handler: deviceAuthorizationEndpoint, cors: false },
  revocation: { methods: ['POST'], handler: revocationEndpoint, cors: true },
  introspection: { methods: ['POST'], handler: introspectionEndpoint, cors: false },
  // OpenID Connect Core 1.0 §5.3.1: GET and POST.
  userinfo: { methods: ['GET', 'POST'], handler: userinfoEndpoint, cors: true },
  jwks: { methods: ['GET'], handler: jwksEndpoint, cors: true },
};

/** Paths where browser-based clients may call (CORS). */
const CORS_PATHS = [
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
