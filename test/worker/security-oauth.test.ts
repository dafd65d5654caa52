// The OAuth 2.0 Security BCP (RFC 9700) items that apply to Knock, one by one, as an attacker would try
// them. The token service's own tests cover each rule in depth; this is the checklist.
import { describe, expect, it, vi } from 'vitest';
import { expectError } from './support/contract';
import {
  authorizeCode,
  authorizePath,
  consentFields,
  csrfOf,
  exchange,
  locationParams,
  pkcePair,
  refresh,
  registerApp,
  signedIn,
  tokenCall,
  whoAmI,
  type App,
} from './support/oauth';
import { call, ORIGIN } from './support/http';

const invalidGrant = expect.objectContaining({ error: 'invalid_grant', error_description: expect.any(String) });

/** An authorization request that must be shown as an error page: no redirect, no code. */
const expectErrorPage = async (res: Response) => {
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await res.text()).not.toMatch(/code=/);
};

describe('RFC 9700 §4.1: redirect URIs match exactly', () => {
  const registered = 'https://client.example/cb';
  const variants = [
    'https://client.example/cb/',
    'https://client.example/CB',
    'https://CLIENT.example/cb',
    'https://client.example/cb?extra=1',
    'https://client.example/cb/../evil',
    'https://client.example/cb%2F..%2Fevil',
    'https://client.example/cb#x',
    'https://client.example:8443/cb',
    'http://client.example/cb',
    'https://client.example.evil.example/cb',
    'https://evil.example/cb',
    'https://client.example@evil.example/cb',
    '//client.example/cb',
    'https://client.example/cbx',
    ' https://client.example/cb',
    'https://client.example/cb ',
  ];

  it.each(variants)('refuses %j with an error page, signed in or not, on the GET and on the consent POST', async (uri) => {
    const app = await registerApp({ redirectUris: [registered, 'http://127.0.0.1/cb'] });
    const anonymous = await call(authorizePath({ client_id: app.clientId, redirect_uri: uri, state: 's' }), { redirect: 'manual' });
    await expectErrorPage(anonymous);
    const { browser } = await signedIn('bcp');
    await expectErrorPage(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: uri, state: 's' })));
    // A tampered consent form is checked again.
    const page = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: registered, state: 's' }));
    const html = await page.text();
    const tampered = await browser.post('/login/oauth/authorize', { ...consentFields(html), redirect_uri: uri, authenticity_token: csrfOf(html), decision: 'authorize' });
    await expectErrorPage(tampered);
  });

  it('lets only the port of the loopback 127.0.0.1 vary (RFC 8252 §7.3), not its host or path', async () => {
    const app = await registerApp({ redirectUris: ['http://127.0.0.1/cb'] });
    const { browser } = await signedIn('bcp');
    const ok = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: 'http://127.0.0.1:51234/cb', state: 's' }));
    expect(ok.status).toBe(200);
    for (const uri of ['http://localhost:51234/cb', 'http://127.0.0.2:51234/cb', 'http://127.0.0.1:51234/cb/x', 'https://127.0.0.1:51234/cb']) {
      await expectErrorPage(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: uri, state: 's' })));
    }
  });
});

describe('RFC 9700 §4.11: no open redirectors', () => {
  it('never redirects to an unregistered URI, whatever else is wrong with the request', async () => {
    const app = await registerApp({ redirectUris: ['https://client.example/cb'] });
    const { browser } = await signedIn('bcp');
    for (const query of [
      { client_id: 'unknown-client', redirect_uri: 'https://evil.example/', response_type: 'token' },
      { client_id: app.clientId, redirect_uri: 'https://evil.example/', response_type: 'token' },
      { client_id: app.clientId, redirect_uri: 'https://evil.example/', scope: 'sudo' },
      { redirect_uri: 'https://evil.example/' },
    ]) {
      for (const res of [await browser.get(authorizePath(query)), await call(authorizePath(query), { redirect: 'manual' })]) {
        await expectErrorPage(res);
      }
    }
  });

  it('sends errors about a registered redirect URI back to it, and only to it', async () => {
    const app = await registerApp({ redirectUris: ['https://client.example/cb'] });
    const res = await call(authorizePath({ client_id: app.clientId, redirect_uri: 'https://client.example/cb', scope: 'sudo', state: 'st' }), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://client.example/cb');
    expect(location.searchParams.get('error')).toBe('invalid_scope');
  });

  it.each(['//evil.example', '/\\evil.example', 'https://evil.example/', '/%5Cevil.example', 'http:evil.example', '/\r\n/evil.example'])(
    'keeps sign-in and sign-up on this origin for return_to=%j',
    async (returnTo) => {
      const { browser } = await signedIn('bcp');
      const res = await browser.get(`/users/sign_in?return_to=${encodeURIComponent(returnTo)}`);
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location')!, ORIGIN).origin).toBe(ORIGIN);
      const page = await (await call(`/users/sign_up?return_to=${encodeURIComponent(returnTo)}`)).text();
      const carried = /name="return_to" value="([^"]*)"/.exec(page)![1].replace(/&amp;/g, '&');
      expect(new URL(carried, ORIGIN).origin).toBe(ORIGIN);
      expect(carried).toMatch(/^\/(?![/\\])/);
    },
  );
});

describe('RFC 9700 §2.1.1 and §4.8: PKCE, and no downgrade', () => {
  const withChallenge = async (app: App) => {
    const { browser } = await signedIn('bcp');
    const pkce = await pkcePair();
    const { code } = await authorizeCode(browser, app, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    return { code, verifier: pkce.verifier };
  };

  it('refuses a code issued with a challenge when the verifier is missing, empty or wrong', async () => {
    const app = await registerApp();
    for (const verifier of [undefined, 'x'.repeat(43), '', 'short'] as const) {
      const { code } = await withChallenge(app);
      const body: Record<string, string> = { client_id: app.clientId, client_secret: app.secret!, code };
      if (verifier !== undefined) body.code_verifier = verifier;
      const res = await tokenCall(body);
      await expectError(res, 400, expect.objectContaining({ error: expect.stringMatching(/^(invalid_grant|invalid_request)$/) }));
    }
  });

  it('refuses a verifier for a code issued without a challenge (no upgrade-by-guess either)', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, app);
    await expectError(await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, code_verifier: 'v'.repeat(43) }), 400);
  });

  it('refuses the plain method and public clients without PKCE at the authorization endpoint', async () => {
    const publicApp = await registerApp({ confidential: false, redirectUris: ['https://client.example/cb'] });
    const { browser } = await signedIn('bcp');
    const noPkce = await browser.get(authorizePath({ client_id: publicApp.clientId, redirect_uri: 'https://client.example/cb', state: 's' }));
    expect(locationParams(noPkce).get('error')).toBe('invalid_request');
    const plain = await browser.get(
      authorizePath({ client_id: publicApp.clientId, redirect_uri: 'https://client.example/cb', state: 's', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }),
    );
    expect(locationParams(plain).get('error')).toBe('invalid_request');
    expect(locationParams(plain).get('code')).toBeNull();
  });
});

describe('RFC 9700 §4.5: authorization codes', () => {
  it('are single use: a replay is refused and revokes what the code bought', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, app);
    const tokens = await exchange(app, code);
    expect((await whoAmI(tokens.access_token)).status).toBe(200);
    await expectError(await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code }), 400, invalidGrant);
    expect((await whoAmI(tokens.access_token)).status).toBe(401);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(400);
  });

  it('are bound to the client and the redirect URI they were issued for (code injection)', async () => {
    const victimApp = await registerApp();
    const attackerApp = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, victimApp);
    await expectError(await tokenCall({ client_id: attackerApp.clientId, client_secret: attackerApp.secret!, code }), 400, invalidGrant);
    await expectError(await tokenCall({ client_id: victimApp.clientId, client_secret: attackerApp.secret!, code }), 401, expect.objectContaining({ error: 'invalid_client' }));
    const other = await authorizeCode(browser, victimApp);
    await expectError(
      await tokenCall({ client_id: victimApp.clientId, client_secret: victimApp.secret!, code: other.code, redirect_uri: 'https://evil.example/cb' }),
      400,
      invalidGrant,
    );
  });

  it('come back with state and iss (RFC 9207, mix-up defence), and the response is never cached', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const res = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 'xyz' }));
    const html = await res.text();
    const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
    expect(answer.headers.get('cache-control')).toContain('no-store');
    const params = locationParams(answer);
    expect(params.get('state')).toBe('xyz');
    expect(params.get('iss')).toBe(ORIGIN);
    const metadata = (await (await call('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(ORIGIN);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
  });
});

describe('RFC 9700 §4.14: refresh tokens', () => {
  it('rotate, and a reused rotated token revokes the whole grant', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, app);
    const first = await exchange(app, code);
    const second = (await (await refresh(app, first.refresh_token)).json()) as { access_token: string; refresh_token: string };
    expect((await whoAmI(second.access_token)).status).toBe(200);
    const third = (await (await refresh(app, second.refresh_token)).json()) as { access_token: string; refresh_token: string };
    // The attacker replays the stolen first token after the legitimate client moved on.
    await expectError(await refresh(app, first.refresh_token), 400, invalidGrant);
    expect((await whoAmI(third.access_token)).status).toBe(401);
    await expectError(await refresh(app, third.refresh_token), 400, invalidGrant);
  });

  it('are bound to their client', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, app);
    const tokens = await exchange(app, code);
    await expectError(await refresh(other, tokens.refresh_token), 400, invalidGrant);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(200);
  });
});

describe('RFC 6750 §2.3 and §5.3: bearer tokens travel in headers only', () => {
  it('does not accept a token in the query string or a form body', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    for (const name of ['private_token', 'access_token']) {
      await expectError(await call(`/api/v4/user?${name}=${tokens.access_token}`), 401, { message: '401 Unauthorized' });
    }
    const form = await call('/api/v4/user', {
      method: 'GET',
      headers: { Cookie: `private_token=${tokens.access_token}` },
    });
    await expectError(form, 401, { message: '401 Unauthorized' });
  });

  it('answers token requests with Cache-Control: no-store', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('bcp');
    const { code } = await authorizeCode(browser, app);
    const res = await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code });
    expect(res.headers.get('cache-control')).toContain('no-store');
    const refused = await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code });
    expect(refused.headers.get('cache-control')).toContain('no-store');
  });
});
