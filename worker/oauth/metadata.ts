import type { Context } from 'hono';
import { publicOrigin } from '../config';
import type { BaseEnv } from '../env';
import { json } from '../errors';
import { SCOPES } from './scopes';

/** `GET /.well-known/oauth-authorization-server` (RFC 8414 §2). */
export const metadataEndpoint = (c: Context<BaseEnv>) => {
  const issuer = publicOrigin(c.env, c.req.url);
  const secretMethods = ['client_secret_basic', 'client_secret_post'];
  return json(
    {
      issuer,
      authorization_endpoint: `${issuer}/login/oauth/authorize`,
      token_endpoint: `${issuer}/login/oauth/access_token`,
      revocation_endpoint: `${issuer}/login/oauth/revoke`,
      introspection_endpoint: `${issuer}/login/oauth/introspect`,
      scopes_supported: [...SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: [...secretMethods, 'none'],
      revocation_endpoint_auth_methods_supported: [...secretMethods, 'none'],
      introspection_endpoint_auth_methods_supported: secretMethods,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    },
    200,
    { 'Cache-Control': 'public, max-age=3600' },
  );
};
