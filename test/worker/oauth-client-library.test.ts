// An unmodified standard client library (oauth4webapi) completing the flow against the Worker:
// discovery, authorization code with PKCE and `iss` checking, refresh, introspection, revocation.
import { exports } from 'cloudflare:workers';
import * as oauth from 'oauth4webapi';
import { describe, expect, it, vi } from 'vitest';
import { consentFields, csrfOf, ORIGIN, registerApp, signedIn, whoAmI } from './support/oauth';

// The Worker is called in-process; http:// is fine for the test origin.
const options = {
  [oauth.customFetch]: (url: string, init: RequestInit) => exports.default.fetch(url, init),
  [oauth.allowInsecureRequests]: true,
};

const discover = async () => {
  const issuer = new URL(ORIGIN);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }));
};

/** The user's part: the authorization URL in a signed-in browser, consent, and the callback URL. */
const userAuthorizes = async (authorizationUrl: URL) => {
  const { browser, user } = await signedIn('lib');
  const consent = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
  expect(consent.status).toBe(200);
  const html = await consent.text();
  const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
  expect(answer.status).toBe(303);
  return { user, callback: new URL(answer.headers.get('Location')!) };
};

describe('oauth4webapi against the Worker', () => {
  it('completes discovery, authorization code with PKCE (public client), refresh and revocation', async () => {
    const as = await discover();
    expect(as.issuer).toBe(ORIGIN);
    const app = await registerApp({ confidential: false, scopes: 'api' });
    const client: oauth.Client = { client_id: app.clientId };
    const clientAuth = oauth.None();

    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: app.redirectUri,
      response_type: 'code',
      scope: 'api',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();

    const { user, callback } = await userAuthorizes(authorizationUrl);
    // Checks state and, because the metadata says so, the RFC 9207 `iss`.
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, codeVerifier, options),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(28800);
    expect(await (await whoAmI(tokens.access_token)).json()).toMatchObject({ id: user.id });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, options),
    );
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await whoAmI(refreshed.access_token)).status).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token!, options));
    expect((await whoAmI(refreshed.access_token)).status).toBe(401);
  });

  it('completes the flow for a confidential client with client_secret_basic, and introspects', async () => {
    const as = await discover();
    const app = await registerApp();
    const client: oauth.Client = { client_id: app.clientId };
    const clientAuth = oauth.ClientSecretBasic(app.secret!);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: app.redirectUri,
      response_type: 'code',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    const { user, callback } = await userAuthorizes(authorizationUrl);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, codeVerifier, options),
    );

    const introspection = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.ClientSecretPost(app.secret!), tokens.access_token, options),
    );
    expect(introspection).toMatchObject({ active: true, client_id: app.clientId, username: user.username, scope: 'api read_api' });

    // The library reports a reused code as the protocol error it is.
    await expect(
      oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, codeVerifier, options).then((r) =>
        oauth.processAuthorizationCodeResponse(as, client, r),
      ),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
