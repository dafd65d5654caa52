// Calls to Knock's OAuth token endpoints (RFC 6749 §4.1.3, §6; RFC 7009) for a public client using PKCE.

import { ApiError, apiErrorFrom } from './api-error';
import type { TokenResponse } from './api-types';
import type { Fetch } from './client';

export interface TokenEndpointOptions {
  serverUrl: string;
  clientId: string;
  fetch?: Fetch;
}

const origin = (serverUrl: string) => serverUrl.replace(/\/+$/, '');

async function post(options: TokenEndpointOptions, path: string, body: Record<string, string>): Promise<Response> {
  const fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let response: Response;
  try {
    response = await fetch(`${origin(options.serverUrl)}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ client_id: options.clientId, ...body }),
    });
  } catch (cause) {
    throw new ApiError(`Could not reach ${origin(options.serverUrl)}`, 0);
  }
  if (!response.ok) throw await apiErrorFrom(response);
  return response;
}

/** RFC 6749 §4.1.3 with RFC 7636 §4.5: trades an authorization code for tokens. */
export async function exchangeCode(
  options: TokenEndpointOptions,
  grant: { code: string; codeVerifier: string; redirectUri: string },
): Promise<TokenResponse> {
  const response = await post(options, '/login/oauth/access_token', {
    grant_type: 'authorization_code',
    code: grant.code,
    code_verifier: grant.codeVerifier,
    redirect_uri: grant.redirectUri,
  });
  return response.json() as Promise<TokenResponse>;
}

/** RFC 6749 §6: a new token pair; the old refresh token stops working (rotation). */
export async function refreshTokens(options: TokenEndpointOptions, refreshToken: string): Promise<TokenResponse> {
  const response = await post(options, '/login/oauth/access_token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  });
  return response.json() as Promise<TokenResponse>;
}

/** RFC 7009: ends the grant the token belongs to. */
export async function revokeToken(options: TokenEndpointOptions, token: string): Promise<void> {
  await post(options, '/login/oauth/revoke', { token });
}
