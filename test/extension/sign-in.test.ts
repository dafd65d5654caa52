import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { codeChallengeS256 } from '../../extension/lib/pkce';
import { readAuthorizationResponse, signIn } from '../../extension/lib/sign-in';
import { accessTokenItem, accountItem, refreshTokenItem, serverUrlItem } from '../../extension/lib/stored-values';
import { createFakeKnock, SERVER } from './fake-knock';

const REDIRECT_URI = 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/';

/** The browser's auth window, answering like the server would after the user clicks `answer`. */
function authWindowAnswering(answer: (authorize: URL) => Record<string, string>) {
  const opened: URL[] = [];
  fakeBrowser.identity.getRedirectURL = () => REDIRECT_URI;
  fakeBrowser.identity.launchWebAuthFlow = vi.fn(async ({ url }: { url: string }) => {
    const authorize = new URL(url);
    opened.push(authorize);
    return `${REDIRECT_URI}?${new URLSearchParams(answer(authorize))}`;
  }) as never;
  return opened;
}

async function fakeServerRecordingTokenRequests() {
  const server = createFakeKnock();
  const tokenRequests: Record<string, string>[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (url.endsWith('/login/oauth/access_token')) tokenRequests.push(JSON.parse(String(init?.body)));
      return server.fetch(url, init);
    }),
  );
  await serverUrlItem.setValue(SERVER);
  return { server, tokenRequests };
}

describe('signing in', () => {
  it('runs the code flow with PKCE S256 and stores the session', async () => {
    const { tokenRequests } = await fakeServerRecordingTokenRequests();
    const opened = authWindowAnswering((authorize) => ({
      code: 'the-code',
      state: authorize.searchParams.get('state')!,
      iss: SERVER,
    }));

    const account = await signIn();

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
    const exchange = tokenRequests[0]!;
    expect(exchange).toMatchObject({
      grant_type: 'authorization_code',
      client_id: 'knock-extension',
      code: 'the-code',
      redirect_uri: REDIRECT_URI,
    });
    expect(await codeChallengeS256(exchange.code_verifier!)).toBe(authorize.searchParams.get('code_challenge'));
    expect(account).toMatchObject({ serverUrl: SERVER, username: 'alice' });
    expect(await accountItem.getValue()).toEqual(account);
    expect(await accessTokenItem.getValue()).toMatchObject({ token: 'access-1' });
    expect(await refreshTokenItem.getValue()).toBe('refresh-1');
  });

  it('refuses an answer whose state is not the one it sent, without asking for tokens', async () => {
    const { tokenRequests } = await fakeServerRecordingTokenRequests();
    authWindowAnswering(() => ({ code: 'stolen-code', state: 'someone-elses-state' }));

    await expect(signIn()).rejects.toThrow('did not match');

    expect(tokenRequests).toEqual([]);
    expect(await accountItem.getValue()).toBeNull();
  });

  it('reports a denied consent as cancelled', async () => {
    await fakeServerRecordingTokenRequests();
    authWindowAnswering((authorize) => ({ error: 'access_denied', state: authorize.searchParams.get('state')! }));

    await expect(signIn()).rejects.toThrow('access was denied');
  });

  it('reports a closed auth window readably', async () => {
    await fakeServerRecordingTokenRequests();
    fakeBrowser.identity.getRedirectURL = () => REDIRECT_URI;
    fakeBrowser.identity.launchWebAuthFlow = vi.fn(async () => {
      throw new Error('The user did not approve access.');
    }) as never;

    await expect(signIn()).rejects.toThrow('Sign-in did not finish: The user did not approve access.');
  });

  it('asks for the server address first', async () => {
    await expect(signIn()).rejects.toThrow('Set your Knock server address');
  });
});

describe('the authorization response', () => {
  const expected = { state: 'abc', issuer: SERVER };

  it('yields the code when state and issuer match', () => {
    expect(readAuthorizationResponse(`${REDIRECT_URI}?code=c1&state=abc&iss=${SERVER}`, expected)).toBe('c1');
  });

  it('is refused when another server says it issued it (RFC 9207)', () => {
    expect(() => readAuthorizationResponse(`${REDIRECT_URI}?code=c1&state=abc&iss=https://evil.test`, expected)).toThrow(
      'came from https://evil.test',
    );
  });
});
