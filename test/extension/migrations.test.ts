// Version 1 kept one server and its session under single keys; version 2 keeps several. An
// installation signed in under version 1 is still signed in after the update.

import { describe, expect, it } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { refreshInbox } from '../../extension/lib/inbox';
import { notifyNewRequests } from '../../extension/lib/notifier';
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
        [SERVER]: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth' },
      });
      expect(await credentialsItem.getValue()).toEqual({ [SERVER]: { kind: 'oauth', refreshToken: 'refresh-1' } });
      expect((await accessTokensItem.getValue())[SERVER]).toMatchObject({ token: 'access-1' });
      expect((await authorizationServersItem.getValue())[SERVER]).toEqual(server.metadata());
      expect(await inboxItem.getValue()).toEqual({ [SERVER]: { fetchedAt: 1_000, sources: [SOURCE], problem: null } });
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
