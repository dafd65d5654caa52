// The extension as an OAuth 2.0 client of its Knock server, through oauth4webapi
// (https://github.com/panva/oauth4webapi): a public client (RFC 6749 §2.1) that authenticates
// with nothing but its client_id (`None()`) and proves possession with PKCE (RFC 7636).
// Background only: the popup never imports this module.

import * as oauth from 'oauth4webapi';
import { ApiError, apiErrorFrom } from '../../shared/api-error';
import { EXTENSION_CLIENT_ID } from '../../shared/knock-app';
import { isLoopback } from './server-url';
import { authorizationServersItem } from './stored-values';
import { setEntry } from './stored-updates';

export const client: oauth.Client = { client_id: EXTENSION_CLIENT_ID };
export const clientAuth = oauth.None();

const originOf = (serverUrl: string) => new URL(serverUrl).origin;

/**
 * Options for every oauth4webapi request to `serverUrl`. oauth4webapi refuses URLs that are not
 * https:// unless `allowInsecureRequests` is set: it is set for loopback hosts only (RFC 8252
 * §8.3; `isLoopback`). `fetch` is
 * looked up at call time, and a network failure becomes an ApiError with status 0.
 */
export function requestOptions(serverUrl: string) {
  const origin = originOf(serverUrl);
  return {
    [oauth.allowInsecureRequests]: isLoopback(serverUrl),
    [oauth.customFetch]: async (url: string, init: RequestInit): Promise<Response> => {
      try {
        return await fetch(url, init);
      } catch {
        throw new ApiError(`Could not reach ${origin}`, 0);
      }
    },
  };
}

/**
 * The server's metadata (RFC 8414), from `/.well-known/oauth-authorization-server`. Kept for the
 * browser session; `fresh` asks the server again (sign-in does, so a changed server is noticed).
 */
export async function authorizationServer(serverUrl: string, { fresh = false } = {}): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(originOf(serverUrl));
  if (issuer.protocol !== 'https:' && !isLoopback(serverUrl)) {
    throw new ApiError(`Knock signs in over https:// only; ${issuer.origin} is not on this machine.`, 0);
  }
  const kept = (await authorizationServersItem.getValue())[serverUrl];
  if (!fresh && kept) return kept;
  let metadata: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuer, { ...requestOptions(serverUrl), algorithm: 'oauth2' });
    metadata = await oauth.processDiscoveryResponse(issuer, response);
  } catch (error) {
    const reason = await readableOAuthError(error);
    if (reason instanceof ApiError && reason.status === 0) throw reason;
    throw new ApiError(
      `${issuer.origin} does not look like a Knock server: ${reason instanceof Error ? reason.message : String(reason)}`,
      reason instanceof ApiError ? reason.status : 0,
    );
  }
  await setEntry(authorizationServersItem, serverUrl, metadata);
  return metadata;
}

/**
 * oauth4webapi's errors as ApiErrors carrying the server's own words: an OAuth error body
 * (RFC 6749 §5.2), a `WWW-Authenticate` challenge (RFC 6750 §3), or any other non-2xx answer.
 * Anything else (a malformed answer, our own ApiError) is returned as it is.
 */
async function readableOAuthError(error: unknown): Promise<unknown> {
  if (error instanceof oauth.ResponseBodyError) {
    return new ApiError(error.error_description ?? error.error, error.status, error.error);
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const challenge = error.cause[0];
    const description = challenge?.parameters.error_description ?? challenge?.parameters.error;
    return new ApiError(description ?? `${error.status} Unauthorized`, error.status, challenge?.parameters.error);
  }
  if (error instanceof oauth.OperationProcessingError && error.cause instanceof Response && !error.cause.bodyUsed) {
    return apiErrorFrom(error.cause);
  }
  return error;
}

/** Runs an oauth4webapi exchange, turning its errors into readable ones. */
export async function explained<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw await readableOAuthError(error);
  }
}
