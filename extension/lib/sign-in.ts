// Signing in to one server: the authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636)
// through oauth4webapi, against the endpoints the server publishes (RFC 8414), in the browser's
// auth window (identity.launchWebAuthFlow). Started from the background because a popup closes as
// soon as the auth window takes focus. Or, for a server without OAuth for the extension, a
// personal access token the user pasted.

import * as oauth from 'oauth4webapi';
import { browser } from 'wxt/browser';
import { ApiError } from '../../shared/api-error';
import { createKnockClient } from '../../shared/client';
import { authorizationServer, client, clientAuth, explained, requestOptions } from './oauth';
import { accountsItem, credentialsItem, serversItem, type Account, type ServerUrl } from './stored-values';
import { setEntry } from './stored-updates';
import { authorizedFetch, forgetSession, personalTokenRefused, saveTokens, signOut } from './tokens';

/** GitLab's `api` scope: the extension reads and decides access requests as the user. */
const SCOPE = 'api';

class SignInError extends Error {
  override readonly name = 'SignInError';
}

/**
 * The authorization response (RFC 6749 §4.1.2), checked by oauth4webapi's `validateAuthResponse`:
 * the `iss` the server sends must name the server we asked (RFC 9207), `state` must be ours
 * (RFC 6749 §10.12). Its refusals are put in words here.
 */
function readAuthorizationResponse(
  as: oauth.AuthorizationServer,
  redirectedTo: string,
  expectedState: string,
): URLSearchParams {
  const url = new URL(redirectedTo);
  try {
    return oauth.validateAuthResponse(as, client, url, expectedState);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      if (error.error === 'access_denied') throw new SignInError('Sign-in cancelled: access was denied.');
      throw new SignInError(`Sign-in failed: ${error.error_description ?? error.error}.`);
    }
    const issuer = url.searchParams.get('iss');
    if (issuer === null) throw new SignInError('Sign-in failed: the answer did not say which server sent it.');
    if (issuer !== as.issuer) throw new SignInError(`Sign-in failed: the answer came from ${issuer}, not ${as.issuer}.`);
    throw new SignInError('Sign-in failed: the answer did not match the request.');
  }
}

/** Only a server in the list may be signed in to (adding it is when its permission is asked for). */
async function listed(serverUrl: ServerUrl): Promise<void> {
  if (!(await serversItem.getValue()).includes(serverUrl)) {
    throw new SignInError(`Add ${serverUrl} in the options first.`);
  }
}

export async function signIn(serverUrl: ServerUrl): Promise<Account> {
  await listed(serverUrl);
  const as = await authorizationServer(serverUrl, { fresh: true });
  if (!as.authorization_endpoint) throw new SignInError(`${as.issuer} does not say where to sign in.`);

  const state = oauth.generateRandomState();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const redirectUri = browser.identity.getRedirectURL();
  const authorize = new URL(as.authorization_endpoint);
  authorize.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: SCOPE,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  }).toString();

  let redirectedTo: string | undefined;
  try {
    redirectedTo = await browser.identity.launchWebAuthFlow({ url: authorize.href, interactive: true });
  } catch (error) {
    throw new SignInError(`Sign-in did not finish: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!redirectedTo) throw new SignInError('Sign-in did not finish.');
  const callback = readAuthorizationResponse(as, redirectedTo, state);

  const tokens = await explained(async () => {
    const options = requestOptions(serverUrl);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, callback, redirectUri, codeVerifier, options);
    return oauth.processAuthorizationCodeResponse(as, client, response);
  });
  await forgetSession(serverUrl);
  await saveTokens(serverUrl, tokens);
  const user = await createKnockClient({ serverUrl, fetch: authorizedFetch(serverUrl) }).currentUser();
  const account: Account = { serverUrl, userId: user.id, username: user.username, name: user.name, via: 'oauth', signedInAt: Date.now() };
  await setEntry(accountsItem, serverUrl, account);
  return account;
}

/**
 * Signs in with a personal access token instead: the server must say whose it is
 * (`GET /api/v4/user`) before it is kept. It replaces the server's previous session.
 */
export async function usePersonalAccessToken(serverUrl: ServerUrl, pasted: string): Promise<Account> {
  await listed(serverUrl);
  const token = pasted.trim();
  if (!token) throw new SignInError('Paste a personal access token first.');
  const whoseToken = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('PRIVATE-TOKEN', token);
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers });
    } catch {
      throw new ApiError(`Could not reach ${serverUrl}`, 0);
    }
    if (response.status === 401) throw await personalTokenRefused(serverUrl, response);
    return response;
  };
  const user = await createKnockClient({ serverUrl, fetch: whoseToken }).currentUser();
  await signOut(serverUrl);
  await setEntry(credentialsItem, serverUrl, { kind: 'personal-access-token', token });
  const account: Account = { serverUrl, userId: user.id, username: user.username, name: user.name, via: 'personal-access-token', signedInAt: Date.now() };
  await setEntry(accountsItem, serverUrl, account);
  return account;
}
