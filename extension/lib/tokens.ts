// The signed-in session: where tokens live, how the access token is renewed (one refresh at a
// time, whoever asks) and how API calls are authorized (a 401 gets one refresh and one retry).
// Refresh and revocation go through oauth4webapi against the endpoints the server publishes.

import * as oauth from 'oauth4webapi';
import { ApiError } from '../../shared/api-error';
import { authorizationServer, client, clientAuth, explained, requestOptions } from './oauth';
import { accessTokenItem, accountItem, inboxItem, refreshTokenItem, serverUrlItem } from './stored-values';

/** Renew a little before the server would refuse the token. */
const EXPIRY_MARGIN_MS = 60_000;

/** There is no usable session: the user has to sign in (again). */
export class SignedOutError extends Error {
  override readonly name = 'SignedOutError';
  constructor(message = 'You are signed out. Sign in to Knock again.') {
    super(message);
  }
}

/** The parts of a token response (RFC 6749 §5.1) the extension keeps. */
export interface IssuedTokens {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
}

export async function saveTokens(tokens: IssuedTokens, now: number = Date.now()): Promise<void> {
  // Without `expires_in` the token is used until the server refuses it (then refreshed).
  const expiresAt = tokens.expires_in === undefined ? Number.MAX_SAFE_INTEGER : now + tokens.expires_in * 1000;
  await accessTokenItem.setValue({ token: tokens.access_token, expiresAt });
  // RFC 6749 §6: when the server sends no new refresh token, the one we have stays valid.
  if (tokens.refresh_token !== undefined) await refreshTokenItem.setValue(tokens.refresh_token);
}

/** Forgets everything tied to the signed-in user. */
export async function forgetSession(): Promise<void> {
  await Promise.all([
    accessTokenItem.removeValue(),
    refreshTokenItem.removeValue(),
    accountItem.removeValue(),
    inboxItem.removeValue(),
  ]);
}

/** Signs out: the server ends the grant (RFC 7009, best effort), the extension forgets the tokens. */
export async function signOut(): Promise<void> {
  const [serverUrl, refreshToken] = await Promise.all([serverUrlItem.getValue(), refreshTokenItem.getValue()]);
  await forgetSession();
  if (serverUrl && refreshToken) {
    await revoke(serverUrl, refreshToken).catch(() => undefined);
  }
}

async function revoke(serverUrl: string, refreshToken: string): Promise<void> {
  const as = await authorizationServer(serverUrl);
  await explained(async () => {
    const response = await oauth.revocationRequest(as, client, clientAuth, refreshToken, {
      ...requestOptions(serverUrl),
      additionalParameters: { token_type_hint: 'refresh_token' },
    });
    await oauth.processRevocationResponse(response);
  });
}

let refreshing: Promise<string> | null = null;

/** A new access token from the refresh token. Callers arriving while one is under way share it. */
export function refreshAccessToken(): Promise<string> {
  refreshing ??= renew().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** RFC 6749 §6, with rotation: the answer carries a new refresh token and the old one stops working. */
async function renew(): Promise<string> {
  const [serverUrl, refreshToken] = await Promise.all([serverUrlItem.getValue(), refreshTokenItem.getValue()]);
  if (!serverUrl || !refreshToken) throw new SignedOutError();
  let tokens: oauth.TokenEndpointResponse;
  try {
    const as = await authorizationServer(serverUrl);
    tokens = await explained(async () => {
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, requestOptions(serverUrl));
      return oauth.processRefreshTokenResponse(as, client, response);
    });
  } catch (error) {
    // The server refused the refresh token (expired, revoked, rotated away): that session is over.
    // Anything else (offline, 5xx, 429) may pass, so the refresh token is kept.
    if (error instanceof ApiError && [400, 401, 403].includes(error.status)) {
      await forgetSession();
      throw new SignedOutError(`You were signed out: ${error.message}`);
    }
    throw error;
  }
  await saveTokens(tokens);
  return tokens.access_token;
}

/** The current access token, renewed first when it has expired or is missing. */
export async function accessToken(now: number = Date.now()): Promise<string> {
  const stored = await accessTokenItem.getValue();
  if (stored && stored.expiresAt - EXPIRY_MARGIN_MS > now) return stored.token;
  return refreshAccessToken();
}

/** After the server refused `rejected`: a token that differs from it, renewing only if nobody has. */
async function tokenReplacing(rejected: string): Promise<string> {
  if (refreshing) return refreshing;
  const stored = await accessTokenItem.getValue();
  if (stored && stored.token !== rejected) return stored.token;
  return refreshAccessToken();
}

/** `fetch` with the user's access token (RFC 6750 §2.1); a 401 gets one refresh and one retry. */
export async function authorizedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const send = async (token: string) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    try {
      return await fetch(url, { ...init, headers });
    } catch {
      throw new ApiError(`Could not reach ${new URL(url).origin}`, 0);
    }
  };
  const token = await accessToken();
  const response = await send(token);
  if (response.status !== 401) return response;
  return send(await tokenReplacing(token));
}
