import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { accessTokensItem, accountsItem, credentialsItem } from '../../extension/lib/stored-values';
import { removeEntry, setEntry } from '../../extension/lib/stored-updates';
import { accessToken, authorizedFetch as authorizedFetchFor, signOut, SignedOutError } from '../../extension/lib/tokens';
import { SERVER } from './fake-knock';
import { signedInToFakeKnock } from './signed-in';

const authorizedFetch = (url: string) => authorizedFetchFor(SERVER)(url);
const storedAccessToken = async () => (await accessTokensItem.getValue())[SERVER] ?? null;
const storedAccount = async () => (await accountsItem.getValue())[SERVER] ?? null;
async function storedRefreshToken() {
  const credential = (await credentialsItem.getValue())[SERVER];
  return credential?.kind === 'oauth' ? credential.refreshToken : null;
}

const USER_URL = `${SERVER}/api/v4/user`;

/** The server stops accepting the access token the extension holds (it expired or was revoked). */
function expireAccessTokenOnServer(server: Awaited<ReturnType<typeof signedInToFakeKnock>>) {
  server.validAccessTokens.clear();
}

describe('token storage', () => {
  it('keeps the access token in session storage and the refresh token in local storage, per server', async () => {
    await signedInToFakeKnock();

    const session = JSON.stringify(await fakeBrowser.storage.session.get(null));
    const local = JSON.stringify(await fakeBrowser.storage.local.get(null));
    expect(session).toContain('"access-1"');
    expect(local).toContain('"refresh-1"');
    expect(local).not.toContain('access-1');
    expect(session).not.toContain('refresh-1');
    expect(await storedAccessToken()).toMatchObject({ token: 'access-1' });
    expect(await storedRefreshToken()).toBe('refresh-1');
  });

  it('renews an access token that has expired before using it', async () => {
    const server = await signedInToFakeKnock();
    await setEntry(accessTokensItem, SERVER, { token: 'access-1', expiresAt: Date.now() - 1 });

    expect(await accessToken(SERVER)).toBe('access-2');
    expect(await storedRefreshToken()).toBe('refresh-2');
    expect(server.refreshCalls).toBe(1);
  });

  it('refreshes at the token endpoint the server’s metadata names, and keeps the rotated refresh token', async () => {
    const server = await signedInToFakeKnock();
    server.tokenPath = '/oauth/token';
    await removeEntry(accessTokensItem, SERVER);

    expect(await accessToken(SERVER)).toBe('access-2');
    expect(server.calls).toEqual(['GET /.well-known/oauth-authorization-server', 'POST /oauth/token']);
    expect(server.tokenRequests).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'refresh-1', client_id: 'knock-extension' },
    ]);
    expect(await storedRefreshToken()).toBe('refresh-2');

    // The next renewal sends the rotated token: the first one no longer works on the server.
    await removeEntry(accessTokensItem, SERVER);
    expect(await accessToken(SERVER)).toBe('access-3');
    expect(server.tokenRequests[1]).toMatchObject({ refresh_token: 'refresh-2' });
    expect(server.liveRefreshTokens).toEqual(new Set(['refresh-3']));
  });

  it('renews once however many callers need a new token at the same time', async () => {
    const server = await signedInToFakeKnock();
    await removeEntry(accessTokensItem, SERVER); // as after a browser restart: session storage is empty

    const tokens = await Promise.all([accessToken(SERVER), accessToken(SERVER), accessToken(SERVER), accessToken(SERVER)]);

    expect(tokens).toEqual(['access-2', 'access-2', 'access-2', 'access-2']);
    expect(server.refreshCalls).toBe(1);
    expect(await storedRefreshToken()).toBe('refresh-2');
  });

  it('signing out forgets both tokens and the account, and asks the server to revoke the grant', async () => {
    const server = await signedInToFakeKnock();

    await signOut(SERVER);

    expect(await storedAccessToken()).toBeNull();
    expect(await storedRefreshToken()).toBeNull();
    expect(await storedAccount()).toBeNull();
    expect(server.revocations).toEqual([
      { token: 'refresh-1', token_type_hint: 'refresh_token', client_id: 'knock-extension' },
    ]);
  });

  it('signing out works offline: the tokens are forgotten even when the server cannot be told', async () => {
    await signedInToFakeKnock();
    vi.stubGlobal('fetch', async () => Promise.reject(new TypeError('Failed to fetch')));

    await signOut(SERVER);

    expect(await storedRefreshToken()).toBeNull();
    expect(await storedAccount()).toBeNull();
  });
});

describe('a personal access token', () => {
  async function signedInWithToken() {
    const server = await signedInToFakeKnock();
    server.personalAccessTokens.add('glpat-alice');
    await setEntry(credentialsItem, SERVER, { kind: 'personal-access-token', token: 'glpat-alice' });
    await removeEntry(accessTokensItem, SERVER);
    return server;
  }

  it('is sent as PRIVATE-TOKEN, with no refresh', async () => {
    const server = await signedInWithToken();

    const response = await authorizedFetch(USER_URL);

    expect(response.status).toBe(200);
    expect(server.personalAccessTokenCalls).toBe(1);
    expect(server.refreshCalls).toBe(0);
  });

  it('ends the session when the server refuses it, and says what to do', async () => {
    const server = await signedInWithToken();
    server.personalAccessTokens.clear();

    await expect(authorizedFetch(USER_URL)).rejects.toThrow(
      'knock.test refused the personal access token (401 Unauthorized). It may be mistyped, expired or revoked: paste a valid one in the options.',
    );

    expect(await storedAccount()).toBeNull();
    expect((await credentialsItem.getValue())[SERVER]).toBeUndefined();
  });

  it('is forgotten at sign-out but not revoked: it is the user’s own', async () => {
    const server = await signedInWithToken();

    await signOut(SERVER);

    expect(server.revocations).toEqual([]);
    expect(await credentialsItem.getValue()).toEqual({});
  });
});

describe('authorized calls', () => {
  it('send the access token as a Bearer token', async () => {
    await signedInToFakeKnock();

    const response = await authorizedFetch(USER_URL);

    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ username: 'alice' });
  });

  it('answer a 401 with one refresh and one retry', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);

    const response = await authorizedFetch(USER_URL);

    expect(response.status).toBe(200);
    expect(server.refreshCalls).toBe(1);
    expect(server.calls).toEqual([
      'GET /api/v4/user',
      'GET /.well-known/oauth-authorization-server',
      'POST /login/oauth/access_token',
      'GET /api/v4/user',
    ]);
    expect(await storedRefreshToken()).toBe('refresh-2');
  });

  it('share one refresh when several calls are refused together', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);

    const responses = await Promise.all([authorizedFetch(USER_URL), authorizedFetch(USER_URL), authorizedFetch(USER_URL)]);

    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(server.refreshCalls).toBe(1);
  });

  it('retry only once: a second 401 is the caller’s answer', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);
    const issue = server.issueTokens.bind(server);
    server.issueTokens = () => {
      const tokens = issue();
      server.validAccessTokens.delete(tokens.access_token); // even the new token is refused
      return tokens;
    };

    const response = await authorizedFetch(USER_URL);

    expect(response.status).toBe(401);
    expect(server.refreshCalls).toBe(1);
    expect(server.calls.filter((call) => call === 'GET /api/v4/user')).toHaveLength(2);
  });

  it('end in the signed-out state when the server refuses the refresh token', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);
    server.refreshFailure = { status: 400, body: { error: 'invalid_grant', error_description: 'Token was revoked.' } };

    await expect(authorizedFetch(USER_URL)).rejects.toBeInstanceOf(SignedOutError);

    expect(await storedAccount()).toBeNull();
    expect(await storedRefreshToken()).toBeNull();
    expect(await storedAccessToken()).toBeNull();
  });

  it('keep the refresh token when the server is only unreachable', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);
    server.refreshFailure = { status: 503, body: { message: 'Service Unavailable' } };

    await expect(authorizedFetch(USER_URL)).rejects.toThrow('Service Unavailable');

    expect(await storedRefreshToken()).toBe('refresh-1');
    expect(await storedAccount()).not.toBeNull();
  });

  it('say which server could not be reached, and keep the session', async () => {
    await signedInToFakeKnock();
    await removeEntry(accessTokensItem, SERVER);
    vi.stubGlobal('fetch', async () => Promise.reject(new TypeError('Failed to fetch')));

    await expect(authorizedFetch(USER_URL)).rejects.toThrow(`Could not reach ${SERVER}`);

    expect(await storedRefreshToken()).toBe('refresh-1');
    expect(await storedAccount()).not.toBeNull();
  });
});
