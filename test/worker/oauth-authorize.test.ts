import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { config } from '../../worker/config';
import { authorizeCode, authorizePath, Browser, call, locationParams, ORIGIN, pkcePair, registerApp, signedIn, tokenCall } from './support/oauth';

const challengeOf = async () => (await pkcePair()).challenge;

/** An HTML error page shown to the user: never a redirect. */
const expectErrorPage = async (res: Response, text: RegExp) => {
  expect(res.status).toBe(400);
  expect(res.headers.get('Location')).toBeNull();
  expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
  expect(res.headers.get('X-Frame-Options')).toBe('DENY');
  expect(await res.text()).toMatch(text);
};

/** An error sent back to the client's redirect URI (RFC 6749 §4.1.2.1). */
const expectRedirectedError = (res: Response, redirectUri: string, error: string, state: string | null = 'st') => {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('Location')!);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
  expect(location.searchParams.get('error')).toBe(error);
  expect(location.searchParams.get('error_description')).toEqual(expect.any(String));
  expect(location.searchParams.get('state')).toBe(state);
  expect(location.searchParams.get('iss')).toBe(ORIGIN);
  expect(location.searchParams.get('code')).toBeNull();
};

describe('authorize: client and redirect URI are checked first, and shown, never redirected', () => {
  it('refuses a missing, unknown or repeated client_id with an error page', async () => {
    const { browser } = await signedIn();
    const app = await registerApp();
    await expectErrorPage(await browser.get(authorizePath({ redirect_uri: app.redirectUri, state: 'st' })), /client_id/);
    await expectErrorPage(await browser.get(authorizePath({ client_id: 'no-such-app', redirect_uri: app.redirectUri })), /Unknown application/);
    await expectErrorPage(
      await browser.get(`/login/oauth/authorize?client_id=${app.clientId}&client_id=${app.clientId}&redirect_uri=${encodeURIComponent(app.redirectUri)}`),
      /more than once/,
    );
  });

  it('matches redirect_uri exactly: other paths, queries, hosts, slashes and fragments get an error page', async () => {
    const { browser } = await signedIn();
    const app = await registerApp({ redirectUris: ['https://client.example/cb?tenant=1'] });
    for (const wrong of [
      'https://evil.example/cb?tenant=1',
      'https://client.example/cb',
      'https://client.example/cb?tenant=2',
      'https://client.example/cb/?tenant=1',
      'https://client.example/cb?tenant=1#frag',
      'http://client.example/cb?tenant=1',
      'https://CLIENT.example/cb?tenant=1',
    ]) {
      await expectErrorPage(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: wrong, state: 'st' })), /not registered/);
    }
    const ok = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: 'https://client.example/cb?tenant=1', state: 'st' }));
    expect(ok.status).toBe(200);
  });

  it('checks the client before anything else, even for a signed-out user with other bad parameters', async () => {
    const res = await new Browser().get(authorizePath({ client_id: 'nope', redirect_uri: 'https://evil.example/', response_type: 'token' }));
    await expectErrorPage(res, /Unknown application/);
  });

  it('lets only the port of a loopback 127.0.0.1 redirect URI vary', async () => {
    const { browser } = await signedIn();
    const app = await registerApp({ redirectUris: ['http://127.0.0.1:8000/callback'] });
    const code = await authorizeCode(browser, { ...app, redirectUri: 'http://127.0.0.1:51234/callback' });
    expect(code.code).toMatch(/^knock_ac_/);
    await expectErrorPage(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: 'http://localhost:51234/callback' })), /not registered/);
    await expectErrorPage(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: 'http://127.0.0.1:51234/other' })), /not registered/);
  });

  it('uses the only registered redirect URI when redirect_uri is omitted, and asks for it when there are several', async () => {
    const { browser } = await signedIn();
    const single = await registerApp();
    const { code } = await authorizeCode(browser, { ...single, redirectUri: undefined as unknown as string });
    // The request named no redirect_uri, so neither does the exchange (RFC 6749 §4.1.3 binds the two).
    expect((await tokenCall({ client_id: single.clientId, client_secret: single.secret!, code })).status).toBe(200);

    const several = await registerApp({ redirectUris: ['https://a.example/cb', 'https://b.example/cb'] });
    await expectErrorPage(await browser.get(authorizePath({ client_id: several.clientId, state: 'st' })), /redirect_uri is required/);
  });
});

describe('authorize: other problems go back to the client with error, state and iss', () => {
  it('refuses response types other than code', async () => {
    const { browser } = await signedIn();
    const app = await registerApp();
    expectRedirectedError(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st', response_type: 'token' })), app.redirectUri, 'unsupported_response_type');
  });

  it('refuses unknown scopes and scopes the application was not registered for', async () => {
    const { browser } = await signedIn();
    const app = await registerApp({ scopes: 'read_api' });
    expectRedirectedError(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st', scope: 'admin' })), app.redirectUri, 'invalid_scope');
    expectRedirectedError(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st', scope: 'api' })), app.redirectUri, 'invalid_scope');
    // Without a scope the application's registered scopes are asked for.
    const page = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st' }));
    expect(await page.text()).toMatch(/<strong>read_api<\/strong>/);
  });

  it('requires PKCE S256 from public clients and refuses plain or malformed challenges', async () => {
    const { browser } = await signedIn();
    const app = await registerApp({ confidential: false });
    const base = { client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st' };
    const challenge = await challengeOf();
    expectRedirectedError(await browser.get(authorizePath(base)), app.redirectUri, 'invalid_request');
    expectRedirectedError(await browser.get(authorizePath({ ...base, code_challenge: challenge, code_challenge_method: 'plain' })), app.redirectUri, 'invalid_request');
    expectRedirectedError(await browser.get(authorizePath({ ...base, code_challenge: challenge })), app.redirectUri, 'invalid_request');
    expectRedirectedError(await browser.get(authorizePath({ ...base, code_challenge_method: 'S256' })), app.redirectUri, 'invalid_request');
    expectRedirectedError(await browser.get(authorizePath({ ...base, code_challenge: 'too-short', code_challenge_method: 'S256' })), app.redirectUri, 'invalid_request');
    const ok = await browser.get(authorizePath({ ...base, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(ok.status).toBe(200);
  });

  it('refuses a parameter sent twice once the client is known', async () => {
    const { browser } = await signedIn();
    const app = await registerApp();
    const res = await browser.get(`${authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st' })}&scope=api&scope=read_api`);
    expectRedirectedError(res, app.redirectUri, 'invalid_request');
  });

  it('omits state from the error when the client sent none, and sends errors back before asking a signed-out user to sign in', async () => {
    const app = await registerApp();
    expectRedirectedError(await new Browser().get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'token' })), app.redirectUri, 'unsupported_response_type', null);
  });

  it('keeps a query the registered redirect URI already has', async () => {
    const { browser } = await signedIn();
    const app = await registerApp({ redirectUris: ['https://client.example/cb?tenant=7'] });
    const res = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st', scope: 'nope' }));
    const params = locationParams(res);
    expect(params.get('tenant')).toBe('7');
    expect(params.get('error')).toBe('invalid_scope');
  });

  it('never caches authorization responses and never allows CORS on them', async () => {
    const { browser } = await signedIn();
    const app = await registerApp();
    const res = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'st' }));
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const preflight = await fetchPreflight('/login/oauth/authorize');
    expect(preflight.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

describe('the built-in knock-extension application', () => {
  it('is a public client named "Knock browser extension" that needs PKCE and the configured redirect URIs', async () => {
    const { browser } = await signedIn();
    const redirectUri = config(env).extensionRedirectUris[0];
    expect(redirectUri).toMatch(/^https:\/\//);
    const base = { client_id: 'knock-extension', redirect_uri: redirectUri, state: 'st', scope: 'api' };
    expectRedirectedError(await browser.get(authorizePath(base)), redirectUri, 'invalid_request');
    await expectErrorPage(await browser.get(authorizePath({ ...base, redirect_uri: 'https://evil.chromiumapp.org/' })), /not registered/);

    const { verifier, challenge } = await pkcePair();
    const page = await browser.get(authorizePath({ ...base, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Knock browser extension');

    const app = { id: 0, clientId: 'knock-extension', secret: null, name: 'Knock browser extension', redirectUri };
    const { code } = await authorizeCode(browser, app, { scope: 'api', code_challenge: challenge, code_challenge_method: 'S256' });
    // As the extension sends it: JSON, client_id only, with the verifier.
    const res = await tokenCall({ client_id: 'knock-extension', grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ scope: 'api', token_type: 'Bearer' });

    // Signing in again needs no page: the consent is remembered.
    const again = await browser.get(authorizePath({ ...base, code_challenge: (await pkcePair()).challenge, code_challenge_method: 'S256' }));
    expect(again.status).toBe(302);
    expect(locationParams(again).get('code')).toMatch(/^knock_ac_/);
  });
});

const fetchPreflight = (path: string) =>
  call(path, { method: 'OPTIONS', headers: { Origin: 'https://spa.example', 'Access-Control-Request-Method': 'GET' } });
