import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authorizationParams, checkAuthorizationRequest, redirectWith } from '../../worker/oauth/authorization-request';
import type { OAuthClient } from '../../worker/protocol/oauth-client';

const CONFIDENTIAL: OAuthClient = {
  clientId: 'confidential-app',
  name: 'CI bot',
  secretHash: 'f'.repeat(64),
  redirectUris: ['https://ci.example/callback'],
  scopes: ['read_api', 'api'],
  postLogoutRedirectUris: [],
};
const PUBLIC: OAuthClient = {
  clientId: 'public-app',
  name: 'CLI',
  secretHash: null,
  redirectUris: ['http://127.0.0.1/cb', 'https://cli.example/cb'],
  scopes: ['api'],
  postLogoutRedirectUris: [],
};
const findClient = async (clientId: string) => [CONFIDENTIAL, PUBLIC].find((c) => c.clientId === clientId) ?? null;

// RFC 7636 §4.2, computed here with Node's own SHA-256.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

const check = (params: Record<string, string> | [string, string][]) =>
  checkAuthorizationRequest(findClient, authorizationParams(Array.isArray(params) ? params : Object.entries(params)));

const confidential = { client_id: CONFIDENTIAL.clientId, redirect_uri: 'https://ci.example/callback', response_type: 'code', state: 'xyz' };
const publicWithPkce = { client_id: PUBLIC.clientId, redirect_uri: 'https://cli.example/cb', code_challenge: CHALLENGE, code_challenge_method: 'S256' };

describe('an authorization request (RFC 6749 §4.1.1)', () => {
  it('is accepted with the client, redirect URI, state and the client’s scopes by default', async () => {
    expect(await check(confidential)).toEqual({
      kind: 'ok',
      request: {
        client: CONFIDENTIAL,
        redirectUri: 'https://ci.example/callback',
        redirectUriNamed: true,
        state: 'xyz',
        scopes: ['api', 'read_api'],
        codeChallenge: null,
        nonce: null,
        prompt: [],
        maxAge: null,
        loginHint: null,
      },
    });
  });

  it('from a public client with PKCE S256 keeps the challenge', async () => {
    const checked = await check(publicWithPkce);
    expect(checked).toMatchObject({ kind: 'ok', request: { codeChallenge: CHALLENGE, scopes: ['api'] } });
  });

  it('may leave out redirect_uri only when the client registered exactly one', async () => {
    const { redirect_uri: _, ...withoutUri } = confidential;
    expect(await check(withoutUri)).toMatchObject({ kind: 'ok', request: { redirectUri: 'https://ci.example/callback', redirectUriNamed: false } });
    const { redirect_uri: __, ...publicWithoutUri } = publicWithPkce;
    expect(await check(publicWithoutUri)).toMatchObject({ kind: 'show' });
  });

  it('from a loopback redirect URI on another port is answered on that port (RFC 8252 §7.3)', async () => {
    const checked = await check({ ...publicWithPkce, redirect_uri: 'http://127.0.0.1:43117/cb' });
    expect(checked).toMatchObject({ kind: 'ok', request: { redirectUri: 'http://127.0.0.1:43117/cb' } });
  });
});

describe('a bad client or redirect URI is shown to the user, never redirected to (RFC 6749 §4.1.2.1)', () => {
  it.each([
    ['no client_id', { redirect_uri: 'https://ci.example/callback' }],
    ['an unknown client', { ...confidential, client_id: 'nobody' }],
    ['an unregistered redirect URI', { ...confidential, redirect_uri: 'https://evil.example/callback' }],
    ['a redirect URI differing in port', { ...confidential, redirect_uri: 'https://ci.example:444/callback' }],
  ])('%s', async (_what, params) => {
    expect((await check(params)).kind).toBe('show');
  });

  it.each(['client_id', 'redirect_uri'])('%s sent twice', async (name) => {
    const entries: [string, string][] = [...Object.entries(confidential), [name, name === 'client_id' ? CONFIDENTIAL.clientId : 'https://ci.example/callback']];
    expect((await check(entries)).kind).toBe('show');
  });
});

describe('other problems go back to the redirect URI with an error and the state', () => {
  const back = (error: string, state: string | null = 'xyz') => ({ kind: 'redirect', redirectUri: 'https://ci.example/callback', state, error });

  it('response_type other than code', async () => {
    expect(await check({ ...confidential, response_type: 'token' })).toMatchObject(back('unsupported_response_type'));
  });

  it('an unknown scope, or one the client may not have', async () => {
    expect(await check({ ...confidential, scope: 'sudo' })).toMatchObject(back('invalid_scope'));
    expect(await check({ ...publicWithPkce, state: 'xyz', scope: 'read_api', redirect_uri: 'https://cli.example/cb' })).toMatchObject({
      kind: 'redirect',
      error: 'invalid_scope',
      redirectUri: 'https://cli.example/cb',
    });
  });

  it('a narrower scope than the client’s is granted as asked', async () => {
    expect(await check({ ...confidential, scope: 'read_api' })).toMatchObject({ kind: 'ok', request: { scopes: ['read_api'] } });
  });

  it('a public client without PKCE (RFC 7636; RFC 9700 §2.1.1)', async () => {
    const { code_challenge: _, code_challenge_method: __, ...withoutPkce } = publicWithPkce;
    expect(await check(withoutPkce)).toMatchObject({ kind: 'redirect', error: 'invalid_request', redirectUri: 'https://cli.example/cb' });
  });

  it('the plain PKCE method, a malformed challenge, or a method without a challenge (RFC 7636 §4.4.1)', async () => {
    expect(await check({ ...confidential, code_challenge: VERIFIER, code_challenge_method: 'plain' })).toMatchObject(back('invalid_request'));
    expect(await check({ ...confidential, code_challenge: CHALLENGE.slice(1), code_challenge_method: 'S256' })).toMatchObject(back('invalid_request'));
    expect(await check({ ...confidential, code_challenge_method: 'S256' })).toMatchObject(back('invalid_request'));
  });

  it('any other parameter sent twice (RFC 6749 §3.1), without a state to echo when it is state', async () => {
    const entries: [string, string][] = [...Object.entries(confidential), ['state', 'again']];
    expect(await check(entries)).toMatchObject(back('invalid_request', null));
    const scopes: [string, string][] = [...Object.entries(confidential), ['scope', 'api'], ['scope', 'api']];
    expect(await check(scopes)).toMatchObject(back('invalid_request'));
  });
});

describe('the parameters and the answer', () => {
  it('ignore empty parameters and mark repeated ones', () => {
    const params = authorizationParams([['state', ''], ['scope', 'api'], ['scope', 'read_api'], ['client_id', 'a']]);
    expect([...params]).toEqual([['scope', null], ['client_id', 'a']]);
  });

  it('add the response to the redirect URI, keeping its own query (RFC 6749 §4.1.2) and skipping absent values', () => {
    expect(redirectWith('https://ci.example/callback?tenant=7', { code: 'c0de', state: null, iss: 'https://knock.example' })).toBe(
      'https://ci.example/callback?tenant=7&code=c0de&iss=https%3A%2F%2Fknock.example',
    );
  });
});
