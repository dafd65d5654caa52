import type { Context } from 'hono';
import { publicOrigin } from '../config';
import type { Issued } from '../durable/user/contract';
import { userObject } from '../durable/user/user';
import { unwrap, type Result } from '../durable/result';
import { enforceLimit, LIMITS } from '../edge/rate-limits';
import type { BaseEnv } from '../env';
import { json, problems, raise } from '../errors';
import { AUTHORIZATION_CODE_PREFIX, REFRESH_TOKEN_PREFIX, routeOf } from '../store/tokens';
import { authenticateClient } from './client-auth';
import { isPublicClient, type OAuthClient } from '../services/clients';
import { redeemDeviceCode } from './device-authorization';
import { signIdToken } from './id-token';
import { PROVIDER } from './provider';
import { isKnownScope, parseScopes } from './scopes';
import { DEVICE_CODE_GRANT } from '../protocol/device-codes';
import { NO_STORE, type TokenResponse } from '../protocol/token-response';
import { readOAuthParams } from './request-params';

const GRANT_TYPES: readonly string[] = PROVIDER.grantTypes;

const required = (params: Record<string, string>, name: string): string =>
  params[name] ?? raise(problems.oauth('invalid_request', `${name} is missing.`));

/**
 * OpenID Connect Core 1.0 §3.1.3.3 and §12.2: when the grant includes `openid`, the response also
 * carries an id_token, with the group claims the grant authority read for the new access token.
 */
const withIdToken = async (c: Context<BaseEnv>, client: OAuthClient, issued: Issued): Promise<TokenResponse> => {
  const { response, idToken } = issued;
  if (!idToken) return response;
  const scopes = parseScopes(response.scope);
  const signed = await signIdToken(c.env, { issuer: publicOrigin(c.env, c.req.url), clientId: client.clientId, scopes, accessToken: response.access_token, ...idToken });
  return { ...response, id_token: signed };
};

/**
 * `POST /oauth/token` (GitLab's path) and `POST /login/oauth/access_token`: RFC 6749 §4.1.3 and §6,
 * RFC 8628 §3.4, with OpenID Connect's id_token. The protocol rules that need state (single use, PKCE, rotation)
 * live in the user's grant authority.
 */
export const tokenEndpoint = async (c: Context<BaseEnv>) => {
  const params = await readOAuthParams(c);
  // RFC 6749 §4.1.3 requires grant_type; a request without one is read as the code exchange.
  const grantType = params.grant_type ?? 'authorization_code';
  if (!GRANT_TYPES.includes(grantType)) {
    return raise(problems.oauth('unsupported_grant_type', `grant_type must be one of: ${GRANT_TYPES.join(', ')}.`));
  }
  // Every grant may trust this isolate's cached application: the user's grant authority judges a
  // deletion itself (clients.ts), so the application's own object is not on every exchange.
  const client = await authenticateClient(c, params, { cached: true });
  // Per client once it has proved who it is; anyone can name a public client, so a budget of its
  // own would let one abuser lock every user of it out (edge/rate-limits.ts).
  if (!isPublicClient(client)) await enforceLimit(c.env, LIMITS.oauthClient, client.clientId);

  let result: Result<Issued>;
  if (grantType === 'authorization_code') {
    const code = required(params, 'code');
    const userId = routeOf(AUTHORIZATION_CODE_PREFIX, code);
    if (userId === null) return raise(problems.oauth('invalid_grant', 'The authorization code is invalid, expired or already used.'));
    result = await userObject(c.env, userId).redeemCode({
      userId,
      code,
      clientId: client.clientId,
      publicClient: isPublicClient(client),
      redirectUri: params.redirect_uri ?? null,
      codeVerifier: params.code_verifier ?? null,
      issuer: publicOrigin(c.env, c.req.url),
    });
  } else if (grantType === DEVICE_CODE_GRANT) {
    result = await redeemDeviceCode(c.env, client, required(params, 'device_code'), publicOrigin(c.env, c.req.url));
  } else {
    const refreshToken = required(params, 'refresh_token');
    const userId = routeOf(REFRESH_TOKEN_PREFIX, refreshToken);
    if (userId === null) return raise(problems.oauth('invalid_grant', 'The refresh token is invalid, expired or revoked.'));
    let scope: string[] | null = null;
    if (params.scope !== undefined) {
      scope = parseScopes(params.scope);
      if (scope.length === 0 || !scope.every(isKnownScope)) return raise(problems.oauth('invalid_scope', 'The requested scope is unknown.'));
    }
    result = await userObject(c.env, userId).refresh({ userId, refreshToken, clientId: client.clientId, scope });
  }
  return json(await withIdToken(c, client, unwrap(result)), 200, NO_STORE);
};
