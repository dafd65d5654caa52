// OpenID Connect's parameters of an authorization request (Core 1.0 §3.1.2.1) and what the
// authorization endpoint does with them (§3.1.2.3, §3.1.2.6), as pure rules.
import { describe, expect, it } from 'vitest';
import { authorizationParams, checkAuthorizationRequest } from '../../worker/oauth/authorization-request';
import { nextInteraction, type SignedIn } from '../../worker/oauth/interaction';
import type { OAuthClient } from '../../worker/protocol/oauth-client';

const APP: OAuthClient = {
  clientId: 'rp',
  name: 'Relying party',
  secretHash: 'f'.repeat(64),
  redirectUris: ['https://rp.example/cb'],
  scopes: ['openid', 'profile', 'email'],
  postLogoutRedirectUris: [],
};
const check = (params: Record<string, string>) =>
  checkAuthorizationRequest(async (id) => (id === APP.clientId ? APP : null), authorizationParams(Object.entries({ client_id: APP.clientId, state: 's', ...params })));
const refused = (error: string) => ({ kind: 'redirect', error, redirectUri: 'https://rp.example/cb', state: 's' });

describe('OpenID Connect parameters of an authorization request', () => {
  it('are kept: nonce, prompt (each value once), max_age and login_hint', async () => {
    expect(await check({ scope: 'openid', nonce: 'n-1', prompt: 'login consent login', max_age: '300', login_hint: 'bob' })).toMatchObject({
      kind: 'ok',
      request: { scopes: ['openid'], nonce: 'n-1', prompt: ['login', 'consent'], maxAge: 300, loginHint: 'bob' },
    });
  });

  it('refuse on the redirect: prompt=none with another value, an unknown prompt, a max_age that is not whole seconds', async () => {
    expect(await check({ prompt: 'none login' })).toMatchObject(refused('invalid_request'));
    expect(await check({ prompt: 'select_account' })).toMatchObject(refused('invalid_request'));
    for (const maxAge of ['-1', '1.5', 'soon', '12345678901']) expect(await check({ max_age: maxAge }), maxAge).toMatchObject(refused('invalid_request'));
    expect(await check({ nonce: 'x'.repeat(513) })).toMatchObject(refused('invalid_request'));
  });

  it('refuse request objects (Core §6) and response modes other than query', async () => {
    expect(await check({ request: 'eyJ.e30.' })).toMatchObject(refused('request_not_supported'));
    expect(await check({ request_uri: 'https://rp.example/req' })).toMatchObject(refused('request_uri_not_supported'));
    expect(await check({ response_mode: 'form_post' })).toMatchObject(refused('invalid_request'));
    expect(await check({ response_mode: 'query' })).toMatchObject({ kind: 'ok' });
  });
});

describe('what the authorization endpoint does next', () => {
  const NOW = 1_800_000_000;
  const bob: SignedIn = { username: 'Bob', signedInAt: NOW - 600 };
  const ask = (params: { prompt?: ('none' | 'login' | 'consent')[]; maxAge?: number | null; loginHint?: string | null }, user: SignedIn | null, consented: boolean) =>
    nextInteraction({ prompt: params.prompt ?? [], maxAge: params.maxAge ?? null, loginHint: params.loginHint ?? null }, user, async () => consented, NOW);

  it('signs in, asks for consent, or issues the code on a remembered consent', async () => {
    expect(await ask({}, null, false)).toEqual({ kind: 'sign-in' });
    expect(await ask({}, bob, false)).toEqual({ kind: 'consent' });
    expect(await ask({}, bob, true)).toEqual({ kind: 'issue' });
  });

  it('asks again with prompt=consent, and signs in again with prompt=login', async () => {
    expect(await ask({ prompt: ['consent'] }, bob, true)).toEqual({ kind: 'consent' });
    expect(await ask({ prompt: ['login'] }, bob, true)).toEqual({ kind: 'reauthenticate' });
    expect(await ask({ prompt: ['login'] }, null, true)).toEqual({ kind: 'sign-in' });
  });

  it('signs in again when max_age has passed since the sign-in, or the session never said when', async () => {
    expect(await ask({ maxAge: 3600 }, bob, true)).toEqual({ kind: 'issue' });
    expect(await ask({ maxAge: 599 }, bob, true)).toEqual({ kind: 'reauthenticate' });
    expect(await ask({ maxAge: 0 }, { username: 'bob', signedInAt: NOW }, true)).toEqual({ kind: 'issue' });
    expect(await ask({ maxAge: 3600 }, { username: 'bob', signedInAt: null }, true)).toEqual({ kind: 'reauthenticate' });
  });

  it('signs in again when login_hint names another user than the one signed in (in any case)', async () => {
    expect(await ask({ loginHint: 'bob' }, bob, true)).toEqual({ kind: 'issue' });
    expect(await ask({ loginHint: 'alice' }, bob, true)).toEqual({ kind: 'reauthenticate' });
  });

  it('with prompt=none, answers what a page would have asked as an error (Core §3.1.2.6)', async () => {
    expect(await ask({ prompt: ['none'] }, null, true)).toMatchObject({ kind: 'refuse', error: 'login_required' });
    expect(await ask({ prompt: ['none'], maxAge: 60 }, bob, true)).toMatchObject({ kind: 'refuse', error: 'login_required' });
    expect(await ask({ prompt: ['none'], loginHint: 'alice' }, bob, true)).toMatchObject({ kind: 'refuse', error: 'interaction_required' });
    expect(await ask({ prompt: ['none'] }, bob, false)).toMatchObject({ kind: 'refuse', error: 'consent_required' });
    expect(await ask({ prompt: ['none'] }, bob, true)).toEqual({ kind: 'issue' });
  });
});
