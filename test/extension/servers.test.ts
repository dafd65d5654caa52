// Several servers at once, in the background: each has its own session, list and trouble; the
// badge counts them all; one server's trouble leaves the others as they are.

import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { refreshInbox } from '../../extension/lib/inbox';
import { approve } from '../../extension/lib/request-actions';
import { addServer, removeServer } from '../../extension/lib/servers';
import { accountsItem, credentialsItem, inboxItem, serversItem } from '../../extension/lib/stored-values';
import { accessRequest, createFakeKnock, SERVER } from './fake-knock';
import { serveFrom, signedInTo } from './signed-in';

const OTHER = 'https://other.test';
const HOURS_AGO = (hours: number) => new Date(Date.now() - hours * 3600_000).toISOString();

/** Signed in to two servers; each has a group with id 10 and a request by user 2 (ids are per server). */
async function twoServers() {
  const knock = await signedInTo(createFakeKnock(SERVER));
  const other = await signedInTo(createFakeKnock(OTHER));
  knock.addGroup(10, 'acme', 50, [accessRequest(2, 'bob', 'Bob Builder', HOURS_AGO(2))]);
  knock.addProject(20, 'acme/website', 40, [accessRequest(3, 'carol', 'Carol Coder', HOURS_AGO(1))]);
  other.addGroup(10, 'beta', 50, [accessRequest(2, 'dave', 'Dave Dev', HOURS_AGO(3))]);
  serveFrom(knock, other);
  return { knock, other };
}

const stored = async (serverUrl: string) => (await inboxItem.getValue())[serverUrl];
const usernames = async (serverUrl: string) =>
  (await stored(serverUrl))?.sources.flatMap((source) => source.requests.map((request) => request.username));
const badge = async () => ({
  text: await fakeBrowser.action.getBadgeText({}),
  title: await fakeBrowser.action.getTitle({}),
});

describe('several servers', () => {
  it('each have their own list, and the badge counts them all', async () => {
    await twoServers();

    await refreshInbox();

    expect(await usernames(SERVER)).toEqual(['bob', 'carol']);
    expect(await usernames(OTHER)).toEqual(['dave']);
    expect(await badge()).toEqual({ text: '3', title: 'Knock: 3 access requests waiting.' });
  });

  it('decide on the server the request is on, even where another has the same ids', async () => {
    const { knock, other } = await twoServers();
    await refreshInbox();

    await approve({ serverUrl: OTHER, kind: 'group', sourceId: 10, userId: 2, accessLevel: 30 });

    expect(other.approvals).toEqual([{ kind: 'group', id: 10, userId: 2, accessLevel: 30 }]);
    expect(knock.approvals).toEqual([]);
    expect(await usernames(SERVER)).toEqual(['bob', 'carol']);
    expect(await usernames(OTHER)).toEqual([]);
    expect((await badge()).text).toBe('2');
  });

  it('a server that is down keeps the list it last sent, says so, and the other is brought up to date', async () => {
    const { knock } = await twoServers();
    await refreshInbox();
    serveFrom(knock); // other.test stops answering
    knock.sources[0]!.requests = [];

    await refreshInbox();

    expect(await usernames(SERVER)).toEqual(['carol']);
    expect(await stored(OTHER)).toMatchObject({
      problem: { kind: 'unreachable', message: 'Could not reach https://other.test' },
      sources: [expect.objectContaining({ fullPath: 'beta' })],
    });
    expect(await badge()).toEqual({ text: '2', title: 'Knock: 2 access requests waiting. Not up to date: other.test.' });
    expect(await accountsItem.getValue()).toHaveProperty([OTHER]); // still signed in: it may come back
  });

  it('a session that ends on one server leaves the other signed in', async () => {
    const { other } = await twoServers();
    await refreshInbox();
    other.validAccessTokens.clear();
    other.refreshFailure = { status: 400, body: { error: 'invalid_grant', error_description: 'Token was revoked.' } };

    await refreshInbox();

    expect(Object.keys(await accountsItem.getValue())).toEqual([SERVER]);
    expect(Object.keys(await credentialsItem.getValue())).toEqual([SERVER]);
    expect(await stored(OTHER)).toEqual({
      fetchedAt: null,
      sources: [],
      problem: { kind: 'signed-out', message: 'You were signed out: Token was revoked.' },
      api: null,
      own: null,
      ownCheckedAt: null,
    });
    expect(await usernames(SERVER)).toEqual(['bob', 'carol']);
    expect((await badge()).text).toBe('2');
  });

  it('a server the browser does not let us reach is not asked, and the list says what to do', async () => {
    const { other } = await twoServers();
    vi.mocked(fakeBrowser.permissions.contains).mockImplementation(async ({ origins }) => !origins?.includes('https://other.test/*'));

    await refreshInbox();

    expect(other.calls).toEqual([]);
    expect((await stored(OTHER))?.problem).toEqual({
      kind: 'no-permission',
      message: "Your browser does not let Knock reach other.test. Open Knock's options and click “Allow access”.",
    });
    expect(await usernames(SERVER)).toEqual(['bob', 'carol']);
  });
});

describe('the list of servers', () => {
  it('adds a server by its origin, once, and says whether it may be reached', async () => {
    vi.mocked(fakeBrowser.permissions.contains).mockImplementation(async ({ origins }) => origins?.[0] === 'http://127.0.0.1/*');

    serveFrom(createFakeKnock('http://127.0.0.1:8787'));

    expect(await addServer('http://127.0.0.1:8787/anything')).toEqual({ serverUrl: 'http://127.0.0.1:8787', alreadyListed: false, reachable: true, problem: null });
    expect(await addServer('http://127.0.0.1:8787')).toEqual({ serverUrl: 'http://127.0.0.1:8787', alreadyListed: true, reachable: true, problem: null });
    expect(await addServer('https://knock.example')).toEqual({ serverUrl: 'https://knock.example', alreadyListed: false, reachable: false, problem: null });

    expect(await serversItem.getValue()).toEqual(['http://127.0.0.1:8787', 'https://knock.example']);
    expect((await stored('https://knock.example'))?.problem?.kind).toBe('no-permission');
    expect(fakeBrowser.permissions.contains).toHaveBeenCalledWith({ origins: ['http://127.0.0.1/*'] });
  });

  it('adds a server that does not answer, saying why', async () => {
    serveFrom();
    const added = await addServer('http://127.0.0.1:9');
    expect(added).toMatchObject({ serverUrl: 'http://127.0.0.1:9', reachable: true, problem: 'Knock could not reach 127.0.0.1:9. Is the address right, and the server running?' });
    expect(await serversItem.getValue()).toEqual(['http://127.0.0.1:9']);
  });

  it('removing a server ends its grant and forgets it; a refresh already under way does not bring it back', async () => {
    const { knock, other } = await twoServers();
    await refreshInbox();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      const server = url.startsWith(OTHER) ? other : knock;
      const response = await server.fetch(url, init);
      if (url.startsWith(`${OTHER}/api/v4/access_requests`)) await held;
      return response;
    });
    const refresh = refreshInbox();
    await vi.waitFor(() => expect(other.calls).toContain('GET /api/v4/access_requests'));

    await removeServer(OTHER);
    release();
    await refresh;

    expect(await serversItem.getValue()).toEqual([SERVER]);
    expect(other.revocations).toEqual([expect.objectContaining({ token: 'refresh-1', token_type_hint: 'refresh_token' })]);
    expect(Object.keys(await inboxItem.getValue())).toEqual([SERVER]);
    expect(Object.keys(await accountsItem.getValue())).toEqual([SERVER]);
    expect((await badge()).text).toBe('2');
  });
});
