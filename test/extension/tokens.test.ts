import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { accessTokenItem, accountItem, refreshTokenItem } from '../../extension/lib/stored-values';
import { accessToken, authorizedFetch, signOut, SignedOutError } from '../../extension/lib/tokens';
import { SERVER } from './fake-knock';
import { signedInToFakeKnock } from './signed-in';

const USER_URL = `${SERVER}/api/v4/user`;

/** The server stops accepting the access token the extension holds (it expired or was revoked). */
function expireAccessTokenOnServer(server: Awaited<ReturnType<typeof signedInToFakeKnock>>) {
  server.validAccessTokens.clear();
}

describe('token storage', () => {
  it('keeps the access token in session storage and the refresh token in local storage', async () => {
    await signedInToFakeKnock();

    const session = await fakeBrowser.storage.session.get(null);
    const local = await fakeBrowser.storage.local.get(null);
    expect(Object.values(session)).toContainEqual(expect.objectContaining({ token: 'access-1' }));
    expect(Object.values(local)).toContain('refresh-1');
    expect(JSON.stringify(local)).not.toContain('access-1');
    expect(JSON.stringify(session)).not.toContain('refresh-1');
  });

  it('renews an access token that has expired before using it', async () => {
    const server = await signedInToFakeKnock();
    await accessTokenItem.setValue({ token: 'access-1', expiresAt: Date.now() - 1 });

    expect(await accessToken()).toBe('access-2');
    expect(await refreshTokenItem.getValue()).toBe('refresh-2');
    expect(server.refreshCalls).toBe(1);
  });

  it('refreshes at the token endpoint the server’s metadata names, and keeps the rotated refresh token', async () => {
    const server = await signedInToFakeKnock();
    server.tokenPath = '/oauth/token';
    await accessTokenItem.removeValue();

    expect(await accessToken()).toBe('access-2');
    expect(server.calls).toEqual(['GET /.well-known/oauth-authorization-server', 'POST /oauth/token']);
    expect(server.tokenRequests).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'refresh-1', client_id: 'knock-extension' },
    ]);
    expect(await refreshTokenItem.getValue()).toBe('refresh-2');

    // The next renewal sends the rotated token: the first one no longer works on the server.
    await accessTokenItem.removeValue();
    expect(await accessToken()).toBe('access-3');
    expect(server.tokenRequests[1]).toMatchObject({ refresh_token: 'refresh-2' });
    expect(server.liveRefreshTokens).toEqual(new Set(['refresh-3']));
  });

  it('renews once however many callers need a new token at the same time', async () => {
    const server = await signedInToFakeKnock();
    await accessTokenItem.removeValue(); // as after a browser restart: session storage is empty

    const tokens = await Promise.all([accessToken(), accessToken(), accessToken(), accessToken()]);

    expect(tokens).toEqual(['access-2', 'access-2', 'access-2', 'access-2']);
    expect(server.refreshCalls).toBe(1);
    expect(await refreshTokenItem.getValue()).toBe('refresh-2');
  });

  it('signing out forgets both tokens and the account, and asks the server to revoke the grant', async () => {
    const server = await signedInToFakeKnock();

    await signOut();

    expect(await accessTokenItem.getValue()).toBeNull();
    expect(await refreshTokenItem.getValue()).toBeNull();
    expect(await accountItem.getValue()).toBeNull();
    expect(server.revocations).toEqual([
      { token: 'refresh-1', token_type_hint: 'refresh_token', client_id: 'knock-extension' },
    ]);
  });

  it('signing out works offline: the tokens are forgotten even when the server cannot be told', async () => {
    await signedInToFakeKnock();
    vi.stubGlobal('fetch', async () => Promise.reject(new TypeError('Failed to fetch')));

    await signOut();

    expect(await refreshTokenItem.getValue()).toBeNull();
    expect(await accountItem.getValue()).toBeNull();
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
    expect(await refreshTokenItem.getValue()).toBe('refresh-2');
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

    expect(await accountItem.getValue()).toBeNull();
    expect(await refreshTokenItem.getValue()).toBeNull();
    expect(await accessTokenItem.getValue()).toBeNull();
  });

  it('keep the refresh token when the server is only unreachable', async () => {
    const server = await signedInToFakeKnock();
    expireAccessTokenOnServer(server);
    server.refreshFailure = { status: 503, body: { message: 'Service Unavailable' } };

    await expect(authorizedFetch(USER_URL)).rejects.toThrow('Service Unavailable');

    expect(await refreshTokenItem.getValue()).toBe('refresh-1');
    expect(await accountItem.getValue()).not.toBeNull();
  });

  it('say which server could not be reached, and keep the session', async () => {
    await signedInToFakeKnock();
    await accessTokenItem.removeValue();
    vi.stubGlobal('fetch', async () => Promise.reject(new TypeError('Failed to fetch')));

    await expect(authorizedFetch(USER_URL)).rejects.toThrow(`Could not reach ${SERVER}`);

    expect(await refreshTokenItem.getValue()).toBe('refresh-1');
    expect(await accountItem.getValue()).not.toBeNull();
  });
});
