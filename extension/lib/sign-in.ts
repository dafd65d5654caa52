// Sign-in: the authorization-code flow with PKCE S256 (RFC 7636) and a checked `state`, run in
// the browser's auth window (identity.launchWebAuthFlow). Started from the background because a
// popup closes as soon as the auth window takes focus.

import { browser } from 'wxt/browser';
import { createKnockClient } from '../../shared/client';
import { exchangeCode } from '../../shared/token-endpoint';
import { CLIENT_ID, SCOPE } from './knock-app';
import { codeChallengeS256, randomToken } from './pkce';
import { accountItem, serverUrlItem, type Account } from './stored-values';
import { authorizedFetch, forgetSession, saveTokens } from './tokens';

export class SignInError extends Error {
  override readonly name = 'SignInError';
}

/** The authorization response (RFC 6749 §4.1.2) checked against what was sent. */
export function readAuthorizationResponse(redirectedTo: string, expected: { state: string; issuer: string }): string {
  const params = new URL(redirectedTo).searchParams;
  // RFC 6749 §10.12: a response that does not carry our state is not the answer to our request.
  if (params.get('state') !== expected.state) throw new SignInError('Sign-in failed: the answer did not match the request.');
  // RFC 9207: when the server names itself, it must be the server we asked.
  const issuer = params.get('iss');
  if (issuer !== null && issuer.replace(/\/+$/, '') !== expected.issuer) {
    throw new SignInError(`Sign-in failed: the answer came from ${issuer}, not ${expected.issuer}.`);
  }
  const error = params.get('error');
  if (error === 'access_denied') throw new SignInError('Sign-in cancelled: access was denied.');
  if (error) throw new SignInError(`Sign-in failed: ${params.get('error_description') ?? error}.`);
  const code = params.get('code');
  if (!code) throw new SignInError('Sign-in failed: the server sent no authorization code.');
  return code;
}

export async function signIn(): Promise<Account> {
  const serverUrl = await serverUrlItem.getValue();
  if (!serverUrl) throw new SignInError('Set your Knock server address in the options first.');

  const state = randomToken();
  const codeVerifier = randomToken();
  const redirectUri = browser.identity.getRedirectURL();
  const authorize = new URL('/login/oauth/authorize', serverUrl);
  authorize.search = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: SCOPE,
    state,
    code_challenge: await codeChallengeS256(codeVerifier),
    code_challenge_method: 'S256',
  }).toString();

  let redirectedTo: string | undefined;
  try {
    redirectedTo = await browser.identity.launchWebAuthFlow({ url: authorize.href, interactive: true });
  } catch (error) {
    throw new SignInError(`Sign-in did not finish: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!redirectedTo) throw new SignInError('Sign-in did not finish.');
  const code = readAuthorizationResponse(redirectedTo, { state, issuer: serverUrl });

  await forgetSession();
  await saveTokens(await exchangeCode({ serverUrl, clientId: CLIENT_ID }, { code, codeVerifier, redirectUri }));
  const user = await createKnockClient({ serverUrl, fetch: authorizedFetch }).currentUser();
  const account: Account = { serverUrl, userId: user.id, username: user.username, name: user.name };
  await accountItem.setValue(account);
  return account;
}
