import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { authorizeCode, call, exchange, pkcePair, refresh, registerApp, signedIn, tokenCall, whoAmI, type App, type Tokens } from './support/oauth';
import { resetClock } from './support/clock';

const expectOAuthError = async (res: Response, status: number, error: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('Content-Type')).toBe('application/json');
  expect(res.headers.get('Cache-Control')).toBe('no-store');
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toEqual({ error, error_description: expect.any(String) });
  return body;
};

/** A fresh code for a signed-in user of `app`. */
const codeFor = async (app: App, extra: Record<string, string | undefined> = {}) => {
  const { browser, user } = await signedIn();
  return { ...(await authorizeCode(browser, app, extra)), user, browser };
};

describe('token endpoint: request format', () => {
  it('accepts JSON, form-encoded bodies and HTTP Basic client authentication', async () => {
    const app = await registerApp();
    const viaJson = await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code: (await codeFor(app)).code, redirect_uri: app.redirectUri });
    expect(viaJson.status).toBe(200);
    const viaForm = await tokenCall(
      { grant_type: 'authorization_code', client_id: app.clientId, client_secret: app.secret!, code: (await codeFor(app)).code, redirect_uri: app.redirectUri },
      { form: true },
    );
    expect(viaForm.status).toBe(200);
    const viaBasic = await tokenCall(
      { grant_type: 'authorization_code', code: (await codeFor(app)).code, redirect_uri: app.redirectUri },
      { form: true, basic: [app.clientId, app.secret!] },
    );
    expect(viaBasic.status).toBe(200);
    const tokens = (await viaBasic.json()) as Tokens;
    expect(viaBasic.headers.get('Cache-Control')).toBe('no-store');
    expect(viaBasic.headers.get('Pragma')).toBe('no-cache');
    // Refresh with Basic too.
    const refreshed = await tokenCall({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { basic: [app.clientId, app.secret!] });
    expect(refreshed.status).toBe(200);
  });

  it('answers other content types with 415 and malformed bodies with invalid_request, never a 500', async () => {
    const post = (body: string, type: string) => call('/login/oauth/access_token', { method: 'POST', headers: { 'Content-Type': type }, body });
    await expectOAuthError(await post('code=x', 'text/plain'), 415, 'invalid_request');
    await expectOAuthError(await post('<xml/>', 'application/xml'), 415, 'invalid_request');
    await expectOAuthError(await post('{"code": ', 'application/json'), 400, 'invalid_request');
    await expectOAuthError(await post('["code"]', 'application/json'), 400, 'invalid_request');
    await expectOAuthError(await post('"code"', 'application/json'), 400, 'invalid_request');
    await expectOAuthError(await post('{"client_id": 5, "code": "x"}', 'application/json'), 400, 'invalid_request');
    await expectOAuthError(await post('{"client_id": {"a": 1}}', 'application/json'), 400, 'invalid_request');
    await expectOAuthError(await post('code=a&code=b&client_id=x', 'application/x-www-form-urlencoded'), 400, 'invalid_request');
  });

  it('never answers 500 to arbitrary bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.json(), fc.dictionary(fc.constantFrom('client_id', 'client_secret', 'code', 'grant_type', 'refresh_token', 'code_verifier', 'redirect_uri', 'scope'), fc.oneof(fc.string(), fc.constant('knock_ac_1_AAAAAAAAAAAAAAAAAAAAAA'), fc.constant('knock_rt_1_AAAAAAAAAAAAAAAAAAAAAA'), fc.constant('knock-extension'))).map((d) => JSON.stringify(d))),
        fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain'),
        async (body, type) => {
          const res = await call('/login/oauth/access_token', { method: 'POST', headers: { 'Content-Type': type }, body });
          expect([400, 401, 415]).toContain(res.status);
          expect(res.headers.get('Content-Type')).toBe('application/json');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers wrong methods with 405 JSON', async () => {
    const res = await call('/login/oauth/access_token');
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ error: '405 Method Not Allowed' });
  });

  it('allows CORS on the token endpoint', async () => {
    const preflight = await call('/login/oauth/access_token', {
      method: 'OPTIONS',
      headers: { Origin: 'https://spa.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(preflight.headers.get('Access-Control-Allow-Methods')).toContain('POST');
    const res = await call('/login/oauth/access_token', { method: 'POST', headers: { Origin: 'https://spa.example', 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });
});

describe('token endpoint: client authentication (401 invalid_client)', () => {
  it('refuses missing, unknown and wrongly authenticated clients', async () => {
    const app = await registerApp();
    const { code } = await codeFor(app);
    await expectOAuthError(await tokenCall({ code }), 401, 'invalid_client');
    await expectOAuthError(await tokenCall({ client_id: 'nobody', client_secret: 'x', code }), 401, 'invalid_client');
    await expectOAuthError(await tokenCall({ client_id: app.clientId, code }), 401, 'invalid_client');
    await expectOAuthError(await tokenCall({ client_id: app.clientId, client_secret: `${app.secret}x`, code }), 401, 'invalid_client');
    // None of these used the code up.
    expect((await exchange(app, code)).token_type).toBe('Bearer');
  });

  it('challenges with WWW-Authenticate: Basic when Basic was tried', async () => {
    const app = await registerApp();
    const wrong = await tokenCall({ code: 'knock_ac_1_xxxxxxxxxxxxxxxxxxxxxxxx' }, { form: true, basic: [app.clientId, 'wrong'] });
    await expectOAuthError(wrong, 401, 'invalid_client');
    expect(wrong.headers.get('WWW-Authenticate')).toMatch(/^Basic realm="Knock"/);
    const garbled = await call('/login/oauth/access_token', { method: 'POST', headers: { Authorization: 'Basic %%%', 'Content-Type': 'application/json' }, body: '{}' });
    await expectOAuthError(garbled, 401, 'invalid_client');
    expect(garbled.headers.get('WWW-Authenticate')).toMatch(/^Basic/);
    const noBasic = await tokenCall({ client_id: app.clientId, client_secret: 'wrong', code: 'x' });
    expect(noBasic.headers.get('WWW-Authenticate')).toBeNull();
  });

  it('refuses two authentication methods at once, and a client_id that contradicts Basic', async () => {
    const app = await registerApp();
    await expectOAuthError(await tokenCall({ client_secret: app.secret!, code: 'x' }, { basic: [app.clientId, app.secret!] }), 400, 'invalid_request');
    await expectOAuthError(await tokenCall({ client_id: 'other', code: 'x' }, { basic: [app.clientId, app.secret!] }), 400, 'invalid_request');
  });

  it('refuses a secret from a public client', async () => {
    const app = await registerApp({ confidential: false });
    await expectOAuthError(await tokenCall({ client_id: app.clientId, client_secret: 'anything', code: 'x' }), 401, 'invalid_client');
  });
});

describe('token endpoint: authorization_code grant', () => {
  it('defaults grant_type to authorization_code and refuses unknown grant types', async () => {
    const app = await registerApp();
    await expectOAuthError(await tokenCall({ grant_type: 'password', client_id: app.clientId, client_secret: app.secret!, username: 'u', password: 'p' }), 400, 'unsupported_grant_type');
    await expectOAuthError(await tokenCall({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.secret! }), 400, 'unsupported_grant_type');
  });

  it('requires a code and refuses unknown, foreign and expired ones', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const creds = { client_id: app.clientId, client_secret: app.secret! };
    await expectOAuthError(await tokenCall(creds), 400, 'invalid_request');
    await expectOAuthError(await tokenCall({ ...creds, code: 'not-a-code' }), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...creds, code: 'knock_ac_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 400, 'invalid_grant');
    const { code, user } = await codeFor(app);
    // A code routed to the wrong user's authority is simply unknown there.
    await expectOAuthError(await tokenCall({ ...creds, code: code.replace(`knock_ac_${user.id}_`, `knock_ac_${user.id + 1}_`) }), 400, 'invalid_grant');
    // Issued to another client.
    await expectOAuthError(await tokenCall({ client_id: other.clientId, client_secret: other.secret!, code }), 400, 'invalid_grant');
    // Codes live 10 minutes.
    const late = await codeFor(app);
    const now = Date.now();
    clock.now = () => now + 601_000;
    await expectOAuthError(await tokenCall({ ...creds, code: late.code }), 400, 'invalid_grant');
    resetClock();
    // The foreign attempt did not use up the first code.
    expect((await exchange(app, code)).access_token).toMatch(/^knock_at_/);
  });

  it('accepts a code until just before 10 minutes', async () => {
    const app = await registerApp();
    const { code } = await codeFor(app);
    const now = Date.now();
    clock.now = () => now + 590_000;
    expect((await exchange(app, code)).expires_in).toBe(28800);
  });

  it('requires the redirect_uri of the authorization request, identical (RFC 6749 §4.1.3)', async () => {
    const app = await registerApp();
    const { code } = await codeFor(app);
    const creds = { client_id: app.clientId, client_secret: app.secret! };
    await expectOAuthError(await tokenCall({ ...creds, code }), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...creds, code, redirect_uri: 'https://elsewhere.example/cb' }), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...creds, code, redirect_uri: `${app.redirectUri}/` }), 400, 'invalid_grant');
    expect((await tokenCall({ ...creds, code, redirect_uri: app.redirectUri })).status).toBe(200);
  });

  it('takes no redirect_uri for a code whose authorization request named none', async () => {
    const app = await registerApp();
    const creds = { client_id: app.clientId, client_secret: app.secret! };
    const first = await codeFor(app, { redirect_uri: undefined });
    await expectOAuthError(await tokenCall({ ...creds, code: first.code, redirect_uri: app.redirectUri }), 400, 'invalid_grant');
    const second = await codeFor(app, { redirect_uri: undefined });
    expect((await tokenCall({ ...creds, code: second.code })).status).toBe(200);
  });
});

describe('token endpoint: PKCE (RFC 7636)', () => {
  it('accepts the right verifier and refuses a wrong or missing one', async () => {
    const app = await registerApp({ confidential: false });
    const { verifier, challenge } = await pkcePair();
    const { code } = await codeFor(app, { code_challenge: challenge, code_challenge_method: 'S256' });
    const base = { client_id: app.clientId, code, redirect_uri: app.redirectUri };
    await expectOAuthError(await tokenCall(base), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...base, code_verifier: (await pkcePair()).verifier }), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...base, code_verifier: 'short' }), 400, 'invalid_grant');
    await expectOAuthError(await tokenCall({ ...base, code_verifier: `${verifier}x` }), 400, 'invalid_grant');
    const ok = await tokenCall({ ...base, code_verifier: verifier });
    expect(ok.status).toBe(200);
  });

  it('works for confidential clients too, and refuses a verifier when no challenge was sent', async () => {
    const app = await registerApp();
    const { verifier, challenge } = await pkcePair();
    const withPkce = await codeFor(app, { code_challenge: challenge, code_challenge_method: 'S256' });
    await expectOAuthError(await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code: withPkce.code, redirect_uri: app.redirectUri }), 400, 'invalid_grant');
    expect((await exchange(app, withPkce.code, { code_verifier: verifier })).token_type).toBe('Bearer');

    const without = await codeFor(app);
    const body = await expectOAuthError(
      await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code: without.code, code_verifier: verifier, redirect_uri: app.redirectUri }),
      400,
      'invalid_grant',
    );
    expect(body.error_description).toMatch(/no code_challenge/);
    expect((await exchange(app, without.code)).token_type).toBe('Bearer');
  });
});

describe('token endpoint: refresh_token grant', () => {
  it('requires a refresh token and refuses unknown and foreign ones', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const tokens = await exchange(app, (await codeFor(app)).code);
    await expectOAuthError(await tokenCall({ client_id: app.clientId, client_secret: app.secret!, grant_type: 'refresh_token' }), 400, 'invalid_request');
    await expectOAuthError(await refresh(app, 'knock_rt_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 400, 'invalid_grant');
    await expectOAuthError(await refresh(app, tokens.access_token), 400, 'invalid_grant');
    await expectOAuthError(await refresh(other, tokens.refresh_token), 400, 'invalid_grant');
    // Still usable by its own client.
    expect((await refresh(app, tokens.refresh_token)).status).toBe(200);
  });

  it('may narrow the scope, never widen it (RFC 6749 §6)', async () => {
    const app = await registerApp({ scopes: 'api read_api' });
    const tokens = await exchange(app, (await codeFor(app, { scope: 'read_api' })).code);
    expect(tokens.scope).toBe('read_api');
    await expectOAuthError(await refresh(app, tokens.refresh_token, { scope: 'api' }), 400, 'invalid_scope');
    await expectOAuthError(await refresh(app, tokens.refresh_token, { scope: 'admin' }), 400, 'invalid_scope');

    const full = await exchange(app, (await codeFor(app)).code);
    const narrowed = await refresh(app, full.refresh_token, { scope: 'read_api' });
    expect(narrowed.status).toBe(200);
    const body = (await narrowed.json()) as Tokens;
    expect(body.scope).toBe('read_api');
    // A read_api token reads but may not write.
    expect((await whoAmI(body.access_token)).status).toBe(200);
    const write = await call('/api/v4/applications', { method: 'POST', headers: { Authorization: `Bearer ${body.access_token}`, 'Content-Type': 'application/json' }, body: '{}' });
    expect(write.status).toBe(403);
    // The grant keeps its scope: the next refresh can have api again.
    const wide = await refresh(app, body.refresh_token);
    expect(((await wide.json()) as Tokens).scope).toBe('api read_api');
  });

  it('refuses a refresh token after its 30 days', async () => {
    const app = await registerApp();
    const tokens = await exchange(app, (await codeFor(app)).code);
    const now = Date.now();
    clock.now = () => now + 30 * 24 * 3600 * 1000 + 1000;
    await expectOAuthError(await refresh(app, tokens.refresh_token), 400, 'invalid_grant');
  });
});
