import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  authorizeCode,
  authorizePath,
  Browser,
  consentFields,
  createUser,
  csrfOf,
  exchange,
  locationParams,
  ORIGIN,
  pkcePair,
  refresh,
  registerApp,
  signedIn,
  tokenCall,
  whoAmI,
  type Tokens,
} from './support/oauth';
import { hashSecret } from '../../worker/store/tokens';

describe('authorization code flow through the pages (RFC 6749 §4.1)', () => {
  it('signs a signed-out user in, asks for consent, redirects with code, state and iss, and the code buys working tokens', async () => {
    const app = await registerApp();
    const user = await createUser();
    const browser = new Browser();
    const state = 'xyz-123';
    const authorize = authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state });

    // Not signed in: the sign-in page first, then back to exactly this request.
    const first = await browser.get(authorize);
    expect(first.status).toBe(302);
    const signIn = new URL(first.headers.get('Location')!, ORIGIN);
    expect(signIn.pathname).toBe('/users/sign_in');
    expect(signIn.searchParams.get('return_to')).toBe(authorize);
    const back = await browser.signIn(user, signIn.searchParams.get('return_to')!);
    const backTo = back.headers.get('Location')!;
    expect(backTo).toBe(authorize);

    // The consent page: application, scopes, the signed-in user, Authorize and Deny.
    const consent = await browser.get(backTo);
    expect(consent.status).toBe(200);
    expect(consent.headers.get('X-Frame-Options')).toBe('DENY');
    expect(consent.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(consent.headers.get('Access-Control-Allow-Origin')).toBeNull();
    const html = await consent.text();
    expect(html).toContain(app.name);
    expect(html).toContain(`@${user.username}`);
    expect(html).toMatch(/<strong>api<\/strong>/);
    expect(html).toMatch(/<strong>read_api<\/strong>/);
    expect(html).toMatch(/value="authorize"[^>]*>\s*Authorize/);
    expect(html).toMatch(/value="deny"[^>]*>\s*Deny/);

    const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('Location')!);
    expect(`${location.origin}${location.pathname}`).toBe(app.redirectUri);
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(ORIGIN);
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^knock_ac_/);

    // The exchange as GitLab's clients send it: JSON with client_id, client_secret, code and redirect_uri, no grant_type.
    const res = await fetchToken({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const tokens = (await res.json()) as Tokens;
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^knock_at_/),
      token_type: 'Bearer',
      expires_in: 28800,
      refresh_token: expect.stringMatching(/^knock_rt_/),
      scope: 'api read_api',
      created_at: expect.any(Number),
    });
    expect(Math.abs(tokens.created_at - Date.now() / 1000)).toBeLessThan(60);

    // Both ways of presenting the token reach the API as the user.
    for (const how of ['bearer', 'private'] as const) {
      const me = await whoAmI(tokens.access_token, how);
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: user.id, username: user.username });
    }

    // Refresh (a JSON body) gives a new working pair.
    const refreshed = await refresh(app, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Tokens;
    expect(next.access_token).not.toBe(tokens.access_token);
    expect((await whoAmI(next.access_token)).status).toBe(200);
  });

  it('Deny sends the user back with error=access_denied, state and iss, and no code', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    const consent = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 's1' }));
    const html = await consent.text();
    const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'deny' });
    expect(answer.status).toBe(303);
    const params = locationParams(answer);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('s1');
    expect(params.get('iss')).toBe(ORIGIN);
    expect(params.get('code')).toBeNull();
    // Denying remembers nothing: the next request asks again.
    const again = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 's2' }));
    expect(again.status).toBe(200);
  });

  it('remembers consent per user, application and scopes: the second authorization redirects at once', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    await authorizeCode(browser, app, { scope: 'read_api' });
    const again = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'again', scope: 'read_api' }));
    expect(again.status).toBe(302);
    expect(locationParams(again).get('code')).toMatch(/^knock_ac_/);
    expect(locationParams(again).get('state')).toBe('again');
    expect(locationParams(again).get('iss')).toBe(ORIGIN);
    // More scopes than were agreed to: ask again.
    const wider = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'w', scope: 'api read_api' }));
    expect(wider.status).toBe(200);
    // Another user of the same browser-less world is asked separately.
    const other = await signedIn();
    const theirs = await other.browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'o', scope: 'read_api' }));
    expect(theirs.status).toBe(200);
  });

  it('refuses a consent form without a valid authenticity token, and cross-origin posts', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    const consent = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 's' }));
    const fields = consentFields(await consent.text());
    const forged = await browser.post('/login/oauth/authorize', { ...fields, authenticity_token: 'forged', decision: 'authorize' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('Location')).toBeNull();
    const crossSite = await browser.post('/login/oauth/authorize', { ...fields, decision: 'authorize' }, { Origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
  });

  it('re-checks the request on the consent answer: a tampered redirect_uri gets an error page', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    const consent = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 's' }));
    const html = await consent.text();
    const res = await browser.post('/login/oauth/authorize', {
      ...consentFields(html),
      redirect_uri: 'https://evil.example/steal',
      authenticity_token: csrfOf(html),
      decision: 'authorize',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('Location')).toBeNull();
  });

  it('works for a public client with PKCE, with the token request sent form-encoded', async () => {
    const app = await registerApp({ confidential: false });
    expect(app.secret).toBeNull();
    const { browser, user } = await signedIn();
    const { verifier, challenge } = await pkcePair();
    const { code } = await authorizeCode(browser, app, { code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await fetchToken(
      { grant_type: 'authorization_code', client_id: app.clientId, code, code_verifier: verifier, redirect_uri: app.redirectUri },
      true,
    );
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Tokens;
    expect(await (await whoAmI(tokens.access_token)).json()).toMatchObject({ id: user.id });
  });

  it('shows the authorized applications and Revoke ends the grant, its tokens and the remembered consent', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { browser } = await signedIn();
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    const keep = await exchange(other, (await authorizeCode(browser, other)).code);

    const page = await browser.get('/oauth/authorized_applications');
    expect(page.status).toBe(200);
    expect(page.headers.get('X-Frame-Options')).toBe('DENY');
    const html = await page.text();
    expect(html).toContain(app.name);
    expect(html).toContain(other.name);
    expect(html).toContain('api, read_api');
    expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/);

    // CSRF-checked.
    const forged = await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: 'nope' });
    expect(forged.status).toBe(403);
    expect((await whoAmI(tokens.access_token)).status).toBe(200);

    const revoked = await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: csrfOf(html) });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('Location')).toBe('/oauth/authorized_applications');

    const me = await whoAmI(tokens.access_token);
    expect(me.status).toBe(401);
    expect(await me.json()).toEqual({ error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
    expect((await refresh(app, tokens.refresh_token)).status).toBe(400);
    // The other application is untouched.
    expect((await whoAmI(keep.access_token)).status).toBe(200);

    const after = await (await browser.get('/oauth/authorized_applications')).text();
    expect(after).not.toContain(app.name);
    expect(after).toContain(other.name);
    // Consent is forgotten: the page is shown again.
    const again = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'x' }));
    expect(again.status).toBe(200);
  });

  it('Revoke again, after a crash lost the KV writes of the first, still ends the tokens it answers for', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    const key = `at:${await hashSecret(env, tokens.access_token)}`;
    const live = await env.TOKENS.get(key);
    const html = await (await browser.get('/oauth/authorized_applications')).text();
    expect((await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: csrfOf(html) })).status).toBe(303);
    // As if the runtime stopped after the grant authority's transaction, before the tombstone: the
    // browser saw no redirect, and the user presses Revoke again.
    await env.TOKENS.put(key, live!);
    const again = await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: csrfOf(html) });
    expect(again.status).toBe(303);
    expect((await whoAmI(tokens.access_token)).status).toBe(401);
  });

  it('sends a signed-out visitor of the authorized applications page to sign in', async () => {
    const res = await new Browser().get('/oauth/authorized_applications');
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/users/sign_in?return_to=%2Foauth%2Fauthorized_applications');
  });

  it('sends a Revoke from a browser whose session has ended to sign in, not to "Form expired"', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    await exchange(app, (await authorizeCode(browser, app)).code);
    const html = await (await browser.get('/oauth/authorized_applications')).text();
    const out = await browser.post('/users/sign_out', { authenticity_token: csrfOf(html) });
    expect(out.status).toBe(303);
    const res = await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: csrfOf(html) });
    expect(res.status).toBe(303);
    expect(res.headers.get('Location')).toBe('/users/sign_in?return_to=%2Foauth%2Fauthorized_applications');
  });
});

const fetchToken = (body: Record<string, string>, form = false) => tokenCall(body, { form });
