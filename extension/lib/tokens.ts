// The session on each server: where its tokens live, how an OAuth access token is renewed (one
// refresh at a time per server, whoever asks) and how API calls are authorized (an OAuth 401 gets
// one refresh and one retry; a personal access token is sent as it is). Refresh and revocation go
// through oauth4webapi against the endpoints the server publishes.

import * as oauth from 'oauth4webapi';
import { ApiError, apiErrorFrom } from '../../shared/api-error';
import type { Fetch } from '../../shared/client';
import { showInboxes } from './badge';
import { authorizationServer, client, clientAuth, explained, requestOptions } from './oauth';
import { serverName } from './server-url';
import { accessTokensItem, accountsItem, credentialsItem, inboxItem, type ServerUrl } from './stored-values';
import { removeEntry, setEntry } from './stored-updates';

/** Renew a little before the server would refuse the token. */
const EXPIRY_MARGIN_MS = 60_000;

/** There is no usable session on a server: the user has to sign in (again). */
export class SignedOutError extends Error {
  override readonly name = 'SignedOutError';
  constructor(message = 'You are signed out. Sign in to Knock again.') {
    super(message);
  }
}

/** The parts of a token response (RFC 6749 §5.1) the extension keeps. */
interface IssuedTokens {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
}

export async function saveTokens(serverUrl: ServerUrl, tokens: IssuedTokens, now: number = Date.now()): Promise<void> {
  // Without `expires_in` the token is used until the server refuses it (then refreshed).
  const expiresAt = tokens.expires_in === undefined ? Number.MAX_SAFE_INTEGER : now + tokens.expires_in * 1000;
  await setEntry(accessTokensItem, serverUrl, { token: tokens.access_token, expiresAt });
  // RFC 6749 §6: when the server sends no new refresh token, the one we have stays valid.
  if (tokens.refresh_token !== undefined) {
    await setEntry(credentialsItem, serverUrl, { kind: 'oauth', refreshToken: tokens.refresh_token });
  }
}

/** Forgets everything tied to the user signed in on `serverUrl`; other servers keep theirs. */
export async function forgetSession(serverUrl: ServerUrl): Promise<void> {
  await Promise.all([
    removeEntry(accessTokensItem, serverUrl),
    removeEntry(credentialsItem, serverUrl),
    removeEntry(accountsItem, serverUrl),
    removeEntry(inboxItem, serverUrl).then(showInboxes),
  ]);
}

/**
 * Signs out of one server: the extension forgets its tokens, and the server ends the OAuth grant
 * (RFC 7009, best effort). A personal access token is only forgotten: it belongs to the user, who
 * may use it elsewhere, and revokes it on the server's own pages.
 */
export async function signOut(serverUrl: ServerUrl): Promise<void> {
  const credential = (await credentialsItem.getValue())[serverUrl];
  await forgetSession(serverUrl);
  if (credential?.kind === 'oauth') {
    await revoke(serverUrl, credential.refreshToken).catch(() => undefined);
  }
}

async function revoke(serverUrl: ServerUrl, refreshToken: string): Promise<void> {
  const as = await authorizationServer(serverUrl);
  await explained(async () => {
    const response = await oauth.revocationRequest(as, client, clientAuth, refreshToken, {
      ...requestOptions(serverUrl),
      additionalParameters: { token_type_hint: 'refresh_token' },
    });
    await oauth.processRevocationResponse(response);
  });
}

const refreshing = new Map<ServerUrl, Promise<string>>();

/** A new access token from the server's refresh token. Callers arriving while one is under way share it. */
function refreshAccessToken(serverUrl: ServerUrl): Promise<string> {
  let renewal = refreshing.get(serverUrl);
  if (!renewal) {
    renewal = renew(serverUrl).finally(() => refreshing.delete(serverUrl));
    refreshing.set(serverUrl, renewal);
  }
  return renewal;
}

/** RFC 6749 §6, with rotation: the answer carries a new refresh token and the old one stops working. */
async function renew(serverUrl: ServerUrl): Promise<string> {
  const credential = (await credentialsItem.getValue())[serverUrl];
  if (credential?.kind !== 'oauth') throw new SignedOutError();
  let tokens: oauth.TokenEndpointResponse;
  try {
    const as = await authorizationServer(serverUrl);
    tokens = await explained(async () => {
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, credential.refreshToken, requestOptions(serverUrl));
      return oauth.processRefreshTokenResponse(as, client, response);
    });
  } catch (error) {
    // The server refused the refresh token (expired, revoked, rotated away): that session is over.
    // Anything else (offline, 5xx, 429) may pass, so the refresh token is kept.
    if (error instanceof ApiError && [400, 401, 403].includes(error.status)) {
      await forgetSession(serverUrl);
      throw new SignedOutError(`You were signed out: ${error.message}`);
    }
    throw error;
  }
  await saveTokens(serverUrl, tokens);
  return tokens.access_token;
}

/** The server's current OAuth access token, renewed first when it has expired or is missing. */
export async function accessToken(serverUrl: ServerUrl, now: number = Date.now()): Promise<string> {
  const stored = (await accessTokensItem.getValue())[serverUrl];
  if (stored && stored.expiresAt - EXPIRY_MARGIN_MS > now) return stored.token;
  return refreshAccessToken(serverUrl);
}

/** After the server refused `rejected`: a token that differs from it, renewing only if nobody has. */
async function tokenReplacing(serverUrl: ServerUrl, rejected: string): Promise<string> {
  const renewal = refreshing.get(serverUrl);
  if (renewal) return renewal;
  const stored = (await accessTokensItem.getValue())[serverUrl];
  if (stored && stored.token !== rejected) return stored.token;
  return refreshAccessToken(serverUrl);
}

async function send(url: string, init: RequestInit, header: [string, string]): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set(...header);
  try {
    return await fetch(url, { ...init, headers });
  } catch {
    throw new ApiError(`Could not reach ${new URL(url).origin}`, 0);
  }
}

/**
 * `fetch` signed for `serverUrl`. With OAuth: the access token as a Bearer token (RFC 6750 §2.1),
 * and a 401 gets one refresh and one retry. With a personal access token: GitLab's `PRIVATE-TOKEN`
 * header; a 401 means the token no longer works (expired or revoked), so the session ends.
 */
export function authorizedFetch(serverUrl: ServerUrl): Fetch {
  return async (url, init = {}) => {
    const credential = (await credentialsItem.getValue())[serverUrl];
    if (!credential) throw new SignedOutError(`You are signed out of ${serverName(serverUrl)}.`);
    if (credential.kind === 'personal-access-token') {
      const response = await send(url, init, ['PRIVATE-TOKEN', credential.token]);
      if (response.status !== 401) return response;
      await forgetSession(serverUrl);
      throw await personalTokenRefused(serverUrl, response);
    }
    const token = await accessToken(serverUrl);
    const response = await send(url, init, ['Authorization', `Bearer ${token}`]);
    if (response.status !== 401) return response;
    return send(url, init, ['Authorization', `Bearer ${await tokenReplacing(serverUrl, token)}`]);
  };
}

/** What to say when a server refuses a personal access token. */
export async function personalTokenRefused(serverUrl: ServerUrl, response: Response): Promise<SignedOutError> {
  const reason = (await apiErrorFrom(response)).message;
  return new SignedOutError(
    `${serverName(serverUrl)} refused the personal access token (${reason}). It may be mistyped, expired or revoked: paste a valid one in the options.`,
  );
}
