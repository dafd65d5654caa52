// Version 1 kept one server and its session under single keys; version 2 keeps several; version 3
// polls Knock's inbox. An installation signed in under version 1 or 2 is still signed in after the
// update.

import { describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { OWN_RECHECK_MS, refreshInbox } from '../../extension/lib/inbox';
import { notifyNewRequests } from '../../extension/lib/notifier';
import type { OwnAccessRequest } from '../../shared/api-types';
import {
  accessTokensItem,
  accountsItem,
  authorizationServersItem,
  credentialsItem,
  inboxItem,
  notifiedRequestsItem,
  serversItem,
} from '../../extension/lib/stored-values';
import { accessToken } from '../../extension/lib/tokens';
import { accessRequest, createFakeKnock, SERVER } from './fake-knock';
import { serveFrom } from './signed-in';

const BOB = accessRequest(2, 'bob', 'Bob Builder', '2026-11-21T10:00:00.000Z');
const SOURCE = { kind: 'group' as const, id: 10, fullPath: 'acme', title: 'acme', approverLevel: 50, requests: [BOB] };

/** What version 1 left in storage for a user signed in to SERVER. */
async function versionOneSignedIn() {
  const server = createFakeKnock();
  const tokens = server.issueTokens(); // access-1, refresh-1
  await fakeBrowser.storage.local.set({
    serverUrl: SERVER,
    account: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner' },
    refreshToken: tokens.refresh_token,
    inbox: { fetchedAt: 1_000, sources: [SOURCE] },
    notifiedRequests: [`group:10:2:${BOB.requested_at}`],
    settings: { pollMinutes: 5, notificationsEnabled: true },
    settings$: { v: 1 },
  });
  await fakeBrowser.storage.session.set({
    accessToken: { token: tokens.access_token, expiresAt: Date.now() + 3_600_000 },
    authorizationServer: { serverUrl: SERVER, metadata: server.metadata() },
  });
  return server;
}

/** What WXT does when the updated extension first uses each value; `order` varies who goes first. */
async function update(order: 'server list first' | 'server list last' = 'server list first') {
  const others = [accountsItem, credentialsItem, accessTokensItem, authorizationServersItem, inboxItem, notifiedRequestsItem];
  if (order === 'server list first') await serversItem.migrate();
  for (const item of others) await item.migrate();
  if (order === 'server list last') await serversItem.migrate();
}

describe('the update from one server to several', () => {
  it.each(['server list first', 'server list last'] as const)(
    'keeps the sign-in, its tokens and its list, keyed by the one server (%s)',
    async (order) => {
      const server = await versionOneSignedIn();

      await update(order);

      expect(await serversItem.getValue()).toEqual([SERVER]);
      expect(await accountsItem.getValue()).toEqual({
        [SERVER]: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth', signedInAt: expect.any(Number) },
      });
      expect(await credentialsItem.getValue()).toEqual({ [SERVER]: { kind: 'oauth', refreshToken: 'refresh-1' } });
      expect((await accessTokensItem.getValue())[SERVER]).toMatchObject({ token: 'access-1' });
      expect((await authorizationServersItem.getValue())[SERVER]).toEqual(server.metadata());
      expect(await inboxItem.getValue()).toEqual({ [SERVER]: { fetchedAt: 1_000, sources: [SOURCE], problem: null, api: null, own: null, ownCheckedAt: null } });
      expect(await notifiedRequestsItem.getValue()).toEqual([`${SERVER} group:10:2:${BOB.requested_at}`]);
    },
  );

  it('goes on working with the server: the access token, then the refresh token', async () => {
    const server = await versionOneSignedIn();
    server.addGroup(10, 'acme', 50, [BOB]);
    serveFrom(server);
    await update();

    expect(await accessToken(SERVER)).toBe('access-1');
    await fakeBrowser.storage.session.clear(); // the browser restarted
    await accessTokensItem.migrate();
    expect(await accessToken(SERVER)).toBe('access-2');
    expect(server.tokenRequests).toEqual([expect.objectContaining({ grant_type: 'refresh_token', refresh_token: 'refresh-1' })]);

    await refreshInbox();
    expect((await inboxItem.getValue())[SERVER]?.sources.map((s) => s.fullPath)).toEqual(['acme']);
  });

  it('does not announce again a request version 1 already announced', async () => {
    await versionOneSignedIn();
    await update();
    const before = Object.keys((await fakeBrowser.notifications.getAll()) as object);

    await notifyNewRequests(await inboxItem.getValue(), true);

    expect(Object.keys((await fakeBrowser.notifications.getAll()) as object)).toEqual(before);
  });

  it('keeps a server that was set but signed out, still signed out', async () => {
    await fakeBrowser.storage.local.set({ serverUrl: SERVER });

    await update();

    expect(await serversItem.getValue()).toEqual([SERVER]);
    expect(await accountsItem.getValue()).toEqual({});
    expect(await credentialsItem.getValue()).toEqual({});
  });

  it('runs once: a second run changes nothing, and a new installation starts empty', async () => {
    await versionOneSignedIn();
    await update();
    const migrated = await fakeBrowser.storage.local.get(null);

    await update();
    expect(await fakeBrowser.storage.local.get(null)).toEqual(migrated);

    await fakeBrowser.storage.local.clear();
    await fakeBrowser.storage.session.clear();
    await update();
    expect(await serversItem.getValue()).toEqual([]);
    expect(await accountsItem.getValue()).toEqual({});
  });
});

describe("the update to Knock's inbox (version 2 to 3)", () => {
  const UPDATED_AT = Date.parse('2026-11-22T12:00:00.000Z');
  const decided = (at: string): OwnAccessRequest => ({
    source_type: 'Project',
    source_id: 20,
    source_full_path: 'acme/website',
    source_name: 'website',
    requested_at: '2026-11-20T09:00:00.000Z',
    status: 'approved',
    access_level: 30,
    expires_at: null,
    decided_at: at,
    decided_by: null, reason: null, denial_reason: null, requested_access_level: null, requested_expires_at: null,
  });

  /** What version 2 left in storage: signed in to SERVER through OAuth, its list fetched source by source. */
  async function versionTwoSignedIn() {
    const server = createFakeKnock();
    const tokens = server.issueTokens();
    await fakeBrowser.storage.local.set({
      serverUrl: [SERVER],
      serverUrl$: { v: 2 },
      account: { [SERVER]: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth' } },
      account$: { v: 2 },
      refreshToken: { [SERVER]: { kind: 'oauth', refreshToken: tokens.refresh_token } },
      refreshToken$: { v: 2 },
      inbox: { [SERVER]: { fetchedAt: 1_000, sources: [SOURCE], problem: null } },
      inbox$: { v: 2 },
      notifiedRequests: [`${SERVER} group:10:2:${BOB.requested_at}`],
      notifiedRequests$: { v: 2 },
    });
    return server;
  }

  it('keeps the sign-in and the list; the next poll is one request to the inbox, and only newer outcomes are announced', async () => {
    const server = await versionTwoSignedIn();
    server.addGroup(10, 'acme', 50, [BOB]);
    server.ownRequests = [decided('2026-11-21T09:00:00.000Z')];
    serveFrom(server);
    vi.useFakeTimers({ now: UPDATED_AT, toFake: ['Date'] });

    for (const item of [serversItem, accountsItem, credentialsItem, inboxItem, notifiedRequestsItem]) await item.migrate();

    expect(await accountsItem.getValue()).toEqual({
      [SERVER]: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth', signedInAt: UPDATED_AT },
    });
    expect(await inboxItem.getValue()).toEqual({ [SERVER]: { fetchedAt: 1_000, sources: [SOURCE], problem: null, api: null, own: null, ownCheckedAt: null } });

    server.calls.length = 0;
    await refreshInbox();
    expect(server.calls.filter((call) => call.startsWith('GET /api/'))).toEqual(['GET /api/v4/access_requests', 'GET /api/v4/user/access_requests', 'GET /api/v4/user/access_alerts']);
    expect((await inboxItem.getValue())[SERVER]).toMatchObject({ sources: [SOURCE], api: { kind: 'inbox' }, own: server.ownRequests });
    expect(Object.keys((await fakeBrowser.notifications.getAll()) as object)).toEqual([]); // decided before the update

    // A request made and decided elsewhere since: the hourly look at her own requests finds it.
    server.ownRequests = [...server.ownRequests, { ...decided('2026-11-22T12:30:00.000Z'), source_id: 21, source_full_path: 'acme/api' }];
    vi.advanceTimersByTime(OWN_RECHECK_MS);
    await refreshInbox();
    expect(Object.keys((await fakeBrowser.notifications.getAll()) as object)).toEqual([
      `${SERVER} project:21:2026-11-20T09:00:00.000Z:approved`,
    ]);
    vi.useRealTimers();
  });
});
