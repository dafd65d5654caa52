// panva's openid-client, unmodified, as a relying party of the Worker (called in-process, as
// oauth-client-library.test.ts calls oauth4webapi): discovery, the code flow with PKCE and a nonce,
// the id_token's signature checked against the JWKS (its non-repudiation checks), userinfo, and a
// refresh across a scheduled rotation of Knock's keys, the clock moved rather than slept; and the
// device authorization grant as a command-line tool runs it.
import { exports } from 'cloudflare:workers';
import { decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { createUser, ORIGIN } from './support/http';
import { admin, as, createGroup, person, startWorker } from './support/namespaces';
import { Browser, consentFields, csrfOf } from './support/oauth';
import { openidApp } from './support/oidc';

beforeAll(startWorker, 30_000);

const DAY = 24 * 3600;

describe('openid-client against the Worker', () => {
  it('discovers Knock, signs bob in with code + PKCE + nonce, reads userinfo, and refreshes across a key rotation with his new group', async () => {
    const app = await openidApp();
    const alice = await person('alice');
    const acme = await createGroup(alice);
    const bob = await createUser('bob');
    expect((await as(bob).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);

    // A key that signs from now; 29 days on, its successor is published (it signs from day 30).
    const rotated = await admin.post('/admin/signing_keys/rotate', { withdraw: true });
    const [{ kid: firstKid }] = (await rotated.json()) as { kid: string }[];
    advance(29 * DAY + 60);

    const config = await client.discovery(new URL(ORIGIN), app.clientId, app.secret!, undefined, {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: (url: string, init: RequestInit) => exports.default.fetch(url, init),
    });
    client.enableNonRepudiationChecks(config);
    expect(config.serverMetadata()).toMatchObject({ issuer: ORIGIN, jwks_uri: `${ORIGIN}/oauth/discovery/keys`, userinfo_endpoint: `${ORIGIN}/oauth/userinfo` });

    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      nonce,
      state,
    });

    // bob's part, on Knock's pages.
    const browser = new Browser();
    expect((await browser.signIn(bob)).status).toBe(303);
    const consent = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
    expect(consent.status).toBe(200);
    const html = await consent.text();
    const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
    expect(answer.status).toBe(303);

    // state, iss, the exchange, and the id_token: signature against the JWKS, iss, aud, exp, nonce, at_hash.
    const tokens = await client.authorizationCodeGrant(config, new URL(answer.headers.get('Location')!), {
      pkceCodeVerifier: codeVerifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
    });
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(firstKid);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: ORIGIN, aud: app.clientId, sub: String(bob.id), nonce, preferred_username: bob.username, groups_direct: [] });
    const jwksSeen = client.getJwksCache(config)!;
    expect(jwksSeen.jwks.keys).toHaveLength(2);

    expect(await client.fetchUserInfo(config, tokens.access_token, claims.sub)).toMatchObject({ sub: claims.sub, preferred_username: bob.username, groups: [] });

    // alice lets bob in; a day later the next key signs.
    expect((await as(alice).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    advance(DAY);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const nextKid = decodeProtectedHeader(refreshed.id_token!).kid;
    expect(nextKid).not.toBe(firstKid);
    // Verified with the JWKS openid-client already had: the key was published before it signed.
    expect(client.getJwksCache(config)!.uat).toBe(jwksSeen.uat);
    expect(jwksSeen.jwks.keys.map((k) => k.kid)).toContain(nextKid);
    expect(refreshed.claims()).toMatchObject({ sub: claims.sub, auth_time: claims.auth_time, groups_direct: [acme.full_path] });
    expect(await client.fetchUserInfo(config, refreshed.access_token, claims.sub)).toMatchObject({
      groups: [acme.full_path],
      'https://gitlab.org/claims/groups/developer': [acme.full_path],
    });
  });

  it('runs the device authorization grant (RFC 8628) for a command-line tool: the code entered on /oauth/device, tokens and a verified id_token by polling', async () => {
    const app = await openidApp({ confidential: false });
    const carol = await createUser('carol');
    const config = await client.discovery(new URL(ORIGIN), app.clientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: (url: string, init: RequestInit) => exports.default.fetch(url, init),
    });
    client.enableNonRepudiationChecks(config);
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${ORIGIN}/oauth/authorize_device`);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });
    expect(started.verification_uri).toBe(`${ORIGIN}/oauth/device`);

    // carol's part, on the verification page the tool showed her.
    const browser = new Browser();
    expect((await browser.signIn(carol)).status).toBe(303);
    const link = new URL(started.verification_uri_complete!);
    const page = await browser.get(link.pathname + link.search);
    const confirm = await browser.post('/oauth/device', { authenticity_token: csrfOf(await page.text()), user_code: started.user_code });
    expect(confirm.status).toBe(200);
    const approved = await browser.post('/oauth/device', { authenticity_token: csrfOf(await confirm.text()), user_code: started.user_code, decision: 'authorize' });
    expect(approved.status).toBe(200);

    // The tool polls; she already decided, so it is told to ask at once rather than wait the interval.
    const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    expect(tokens.claims()).toMatchObject({ iss: ORIGIN, aud: app.clientId, sub: String(carol.id), preferred_username: carol.username });
    expect(await client.fetchUserInfo(config, tokens.access_token, String(carol.id))).toMatchObject({ sub: String(carol.id) });
  });
});
