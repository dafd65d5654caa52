import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { signIn, usePersonalAccessToken } from '../../extension/lib/sign-in';
import { accessTokensItem, accountsItem, credentialsItem, serversItem } from '../../extension/lib/stored-values';
import { createFakeKnock, SERVER } from './fake-knock';

const REDIRECT_URI = 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/';

/** The browser's auth window, answering like the server would after the user clicks `answer`. */
function authWindowAnswering(answer: (authorize: URL) => Record<string, string>) {
  const opened: URL[] = [];
  vi.spyOn(fakeBrowser.identity, 'getRedirectURL').mockReturnValue(REDIRECT_URI);
  vi.spyOn(fakeBrowser.identity, 'launchWebAuthFlow').mockImplementation(async ({ url }) => {
    const authorize = new URL(url);
    opened.push(authorize);
    return `${REDIRECT_URI}?${new URLSearchParams(answer(authorize))}`;
  });
  return opened;
}

/** What a Knock server at `origin` sends back after the user agreed: the code, our state, its name. */
const agreed = (origin: string) => (authorize: URL) => ({
  code: 'the-code',
  state: authorize.searchParams.get('state')!,
  iss: origin,
});

async function fakeServerAt(origin: string = SERVER) {
  const server = createFakeKnock(origin);
  vi.stubGlobal('fetch', vi.fn(server.fetch));
  await serversItem.setValue([origin]);
  return server;
}

/** RFC 7636 §4.2, computed independently of the code under test. */
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

describe('signing in', () => {
  it('finds the endpoints in the server’s metadata, runs the code flow with PKCE S256 and stores the session', async () => {
    const server = await fakeServerAt();
    server.tokenPath = '/oauth/token'; // not the usual path: only the metadata says where it is
    const opened = authWindowAnswering(agreed(SERVER));

    const account = await signIn(SERVER);

    expect(server.calls[0]).toBe('GET /.well-known/oauth-authorization-server');
    const authorize = opened[0]!;
    expect(authorize.origin + authorize.pathname).toBe(`${SERVER}/login/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'knock-extension',
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'api',
      code_challenge_method: 'S256',
    });
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(server.calls).toContain('POST /oauth/token');
    const exchange = server.tokenRequests[0]!;
    expect(exchange).toMatchObject({
      grant_type: 'authorization_code',
      client_id: 'knock-extension',
      code: 'the-code',
      redirect_uri: REDIRECT_URI,
    });
    expect(exchange.code_verifier).toMatch(/^[\w-]{43,128}$/);
    expect(s256(exchange.code_verifier!)).toBe(authorize.searchParams.get('code_challenge'));
    expect(account).toMatchObject({ serverUrl: SERVER, username: 'alice' });
    expect(await accountsItem.getValue()).toEqual({ [SERVER]: account });
    expect((await accessTokensItem.getValue())[SERVER]).toMatchObject({ token: 'access-1' });
    expect((await credentialsItem.getValue())[SERVER]).toEqual({ kind: 'oauth', refreshToken: 'refresh-1' });
  });

  it('talks plain http to a server on this machine', async () => {
    const origin = 'http://127.0.0.1:8787';
    const server = await fakeServerAt(origin);
    authWindowAnswering(agreed(origin));

    expect(await signIn(origin)).toMatchObject({ serverUrl: origin, username: 'alice' });
    expect(server.tokenRequests).toHaveLength(1);
  });

  it('refuses plain http to any other server, before sending anything', async () => {
    const server = await fakeServerAt('http://knock.internal');
    authWindowAnswering(agreed('http://knock.internal'));

    await expect(signIn('http://knock.internal')).rejects.toThrow('https:// only');
    expect(server.calls).toEqual([]);
  });

  it('refuses an answer whose state is not the one it sent, without asking for tokens', async () => {
    const server = await fakeServerAt();
    authWindowAnswering(() => ({ code: 'stolen-code', state: 'someone-elses-state', iss: SERVER }));

    await expect(signIn(SERVER)).rejects.toThrow('did not match');

    expect(server.tokenRequests).toEqual([]);
    expect(await accountsItem.getValue()).toEqual({});
  });

  it('refuses an answer another server says it issued (RFC 9207), without asking for tokens', async () => {
    const server = await fakeServerAt();
    authWindowAnswering((authorize) => ({ ...agreed(SERVER)(authorize), iss: 'https://evil.test' }));

    await expect(signIn(SERVER)).rejects.toThrow('came from https://evil.test');
    expect(server.tokenRequests).toEqual([]);
  });

  it('refuses an answer that does not name its server, since this one always does', async () => {
    const server = await fakeServerAt();
    authWindowAnswering((authorize) => ({ code: 'the-code', state: authorize.searchParams.get('state')! }));

    await expect(signIn(SERVER)).rejects.toThrow('did not say which server sent it');
    expect(server.tokenRequests).toEqual([]);
  });

  it('reports a denied consent as cancelled', async () => {
    await fakeServerAt();
    authWindowAnswering((authorize) => ({ error: 'access_denied', state: authorize.searchParams.get('state')!, iss: SERVER }));

    await expect(signIn(SERVER)).rejects.toThrow('Sign-in cancelled: access was denied.');
  });

  it('reports a refused code exchange with the server’s reason', async () => {
    const server = await fakeServerAt();
    server.exchangeFailure = { status: 400, body: { error: 'invalid_grant', error_description: 'The code has expired.' } };
    authWindowAnswering(agreed(SERVER));

    await expect(signIn(SERVER)).rejects.toThrow('The code has expired.');
    expect(await accountsItem.getValue()).toEqual({});
  });

  it('reports a closed auth window readably', async () => {
    await fakeServerAt();
    vi.spyOn(fakeBrowser.identity, 'getRedirectURL').mockReturnValue(REDIRECT_URI);
    vi.spyOn(fakeBrowser.identity, 'launchWebAuthFlow').mockRejectedValue(new Error('The user did not approve access.'));

    await expect(signIn(SERVER)).rejects.toThrow('Sign-in did not finish: The user did not approve access.');
  });

  it('says so when the server cannot be reached', async () => {
    await serversItem.setValue([SERVER]);
    vi.stubGlobal('fetch', async () => Promise.reject(new TypeError('Failed to fetch')));

    await expect(signIn(SERVER)).rejects.toThrow(`Could not reach ${SERVER}`);
  });

  it('says so when the address is not a Knock server', async () => {
    await serversItem.setValue([SERVER]);
    vi.stubGlobal('fetch', async () => new Response('<h1>Not Found</h1>', { status: 404, headers: { 'Content-Type': 'text/html' } }));

    await expect(signIn(SERVER)).rejects.toThrow(`${SERVER} does not look like a Knock server`);
  });

  it('signs in only to a server that was added (its permission was asked for then)', async () => {
    await expect(signIn(SERVER)).rejects.toThrow('Add https://knock.test in the options first.');
  });

  it('keeps another server’s session when signing in to a second one', async () => {
    const other = createFakeKnock('https://other.test');
    await serversItem.setValue([SERVER, other.origin]);
    const server = createFakeKnock(SERVER);
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) =>
      (url.startsWith(SERVER) ? server : other).fetch(url, init),
    );
    authWindowAnswering((authorize) => ({ ...agreed(authorize.origin)(authorize) }));

    await signIn(SERVER);
    await signIn(other.origin);

    expect(Object.keys(await accountsItem.getValue())).toEqual([SERVER, other.origin]);
    expect(Object.keys(await credentialsItem.getValue())).toEqual([SERVER, other.origin]);
  });
});

describe('a personal access token instead of signing in', () => {
  it('is kept once the server says whose it is', async () => {
    const server = await fakeServerAt();
    server.personalAccessTokens.add('glpat-alice');

    const account = await usePersonalAccessToken(SERVER, '  glpat-alice \n');

    expect(account).toEqual({ serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'personal-access-token', signedInAt: expect.any(Number) });
    expect(await accountsItem.getValue()).toEqual({ [SERVER]: account });
    expect(await credentialsItem.getValue()).toEqual({ [SERVER]: { kind: 'personal-access-token', token: 'glpat-alice' } });
    expect(server.calls).toEqual(['GET /api/v4/user']);
  });

  it('is refused with the server’s answer, and nothing is kept', async () => {
    await fakeServerAt();

    await expect(usePersonalAccessToken(SERVER, 'glpat-wrong')).rejects.toThrow(
      'knock.test refused the personal access token (401 Unauthorized).',
    );
    expect(await accountsItem.getValue()).toEqual({});
    expect(await credentialsItem.getValue()).toEqual({});
  });

  it('replaces an OAuth session, whose grant the server ends', async () => {
    const server = await fakeServerAt();
    authWindowAnswering(agreed(SERVER));
    await signIn(SERVER);
    server.personalAccessTokens.add('glpat-alice');

    await usePersonalAccessToken(SERVER, 'glpat-alice');

    expect(server.revocations).toEqual([expect.objectContaining({ token: 'refresh-1' })]);
    expect(await accessTokensItem.getValue()).toEqual({});
    expect((await accountsItem.getValue())[SERVER]?.via).toBe('personal-access-token');
  });
});
