// OpenID Connect Discovery 1.0 and RFC 8414: one document of what the provider supports, and
// GitLab's paths beside Knock's, each answered by the same endpoint.
import { beforeAll, describe, expect, it } from 'vitest';
import { recordedFetch } from './support/counted';
import { call, ORIGIN } from './support/http';
import { startWorker } from './support/namespaces';
import { consentFields, csrfOf, locationParams, signedIn, tokenCall } from './support/oauth';
import { openidApp, verifyIdToken, type OidcTokens } from './support/oidc';

beforeAll(startWorker, 30_000);

const EXPECTED = {
  issuer: ORIGIN,
  authorization_endpoint: `${ORIGIN}/oauth/authorize`,
  token_endpoint: `${ORIGIN}/oauth/token`,
  userinfo_endpoint: `${ORIGIN}/oauth/userinfo`,
  jwks_uri: `${ORIGIN}/oauth/discovery/keys`,
  revocation_endpoint: `${ORIGIN}/oauth/revoke`,
  introspection_endpoint: `${ORIGIN}/oauth/introspect`,
  device_authorization_endpoint: `${ORIGIN}/oauth/authorize_device`,
  scopes_supported: ['api', 'read_api', 'read_user', 'openid', 'profile', 'email'],
  response_types_supported: ['code'],
  response_modes_supported: ['query'],
  grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['RS256'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  claims_supported: [
    'iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', 'name', 'nickname', 'preferred_username', 'profile', 'email',
    'email_verified', 'groups', 'groups_direct', 'https://gitlab.org/claims/groups/owner', 'https://gitlab.org/claims/groups/maintainer',
    'https://gitlab.org/claims/groups/developer',
  ],
  claim_types_supported: ['normal'],
  prompt_values_supported: ['none', 'login', 'consent'],
  code_challenge_methods_supported: ['S256'],
  authorization_response_iss_parameter_supported: true,
  request_parameter_supported: false,
  request_uri_parameter_supported: false,
  claims_parameter_supported: false,
  end_session_endpoint: `${ORIGIN}/oauth/logout`,
  backchannel_logout_supported: true,
  backchannel_logout_session_supported: true,
};

describe('the provider metadata', () => {
  it('is one document at /.well-known/openid-configuration and /.well-known/oauth-authorization-server, naming GitLab’s paths', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('application/json');
      expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
      expect(await res.json(), path).toEqual(EXPECTED);
    }
  });

  it('and the JWKS are served from the isolate’s memory once read: no Durable Object is called', async () => {
    await call('/.well-known/openid-configuration');
    await call('/oauth/discovery/keys');
    for (const path of ['/.well-known/openid-configuration', '/oauth/discovery/keys']) {
      const { response, calls } = await recordedFetch(path);
      expect(response.status, path).toBe(200);
      expect(calls, path).toEqual([]);
    }
  });
});

describe('GitLab’s paths beside Knock’s', () => {
  it('run the whole flow at /oauth/authorize and /oauth/token, and the seed’s paths answer the same', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('gl');
    for (const [authorize, token, userinfo, introspect, revoke] of [
      ['/oauth/authorize', '/oauth/token', '/oauth/userinfo', '/oauth/introspect', '/oauth/revoke'],
      ['/login/oauth/authorize', '/login/oauth/access_token', '/login/oauth/userinfo', '/login/oauth/introspect', '/login/oauth/revoke'],
    ]) {
      const page = await browser.get(`${authorize}?${new URLSearchParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope: 'openid', state: 's', prompt: 'consent' })}`);
      expect(page.status, authorize).toBe(200);
      const html = await page.text();
      const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
      expect(answer.status).toBe(303);
      const code = locationParams(answer).get('code')!;
      const res = await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, grant_type: 'authorization_code', redirect_uri: app.redirectUri }, { path: token, form: true });
      expect(res.status, token).toBe(200);
      const tokens = (await res.json()) as OidcTokens;
      expect((await verifyIdToken(tokens.id_token!, app)).payload.sub).toBe(String(user.id));
      const info = await call(userinfo, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
      expect(info.status, userinfo).toBe(200);
      const seen = await tokenCall({ token: tokens.access_token }, { path: introspect, basic: [app.clientId, app.secret!], form: true });
      expect(await seen.json(), introspect).toMatchObject({ active: true });
      expect((await tokenCall({ token: tokens.refresh_token }, { path: revoke, basic: [app.clientId, app.secret!], form: true })).status, revoke).toBe(200);
      expect((await call(userinfo, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status, revoke).toBe(401);
    }
  });

  it('take a token request without an Origin at /oauth/token (it is not a page: no form origin check)', async () => {
    const res = await call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'knock_rt_1_xxxxxxxxxxxxxxxxxxxxxxxx' }).toString(),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });
});
