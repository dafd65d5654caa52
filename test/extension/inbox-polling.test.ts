// How the background polls a server: Knock's inbox in one conditional request (with the user's own
// requests beside it), a 304 changing nothing; source by source where the server has no inbox (a
// plain GitLab), asked again a day later or after a sign-in; and the notifications a requester gets.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { ALERTS_RECHECK_MS, OWN_RECHECK_MS, recheckOwnRequests, REPROBE_MS, refreshInbox } from '../../extension/lib/inbox';
import { accountsItem, inboxItem, settingsItem } from '../../extension/lib/stored-values';
import { setEntry } from '../../extension/lib/stored-updates';
import type { AccessAlert, OwnAccessRequest } from '../../shared/api-types';
import { accessRequest, SERVER, type FakeKnock } from './fake-knock';
import { aliceWithTwoPendingRequests, HOURS_AGO } from './signed-in';

const storedInbox = async () => (await inboxItem.getValue())[SERVER];
const badgeText = () => fakeBrowser.action.getBadgeText({});
/** The API requests one refresh makes. */
async function callsOf(server: FakeKnock, refresh: () => Promise<void> = refreshInbox): Promise<string[]> {
  const before = server.calls.length;
  await refresh();
  return server.calls.slice(before).filter((call) => call.startsWith('GET /api/'));
}
/** A poll that also asks for the user's own requests (after sign-in, while one is pending, hourly). */
const INBOX_POLL = ['GET /api/v4/access_requests', 'GET /api/v4/user/access_requests'];
/** A poll that also asks for the manager's alerts (after sign-in, then every ALERTS_RECHECK_MS). */
const WITH_ALERTS = [...INBOX_POLL, 'GET /api/v4/user/access_alerts'];
/** A poll of an owner with nothing pending of their own: one request. */
const INBOX_ONLY = ['GET /api/v4/access_requests'];

afterEach(() => {
  vi.useRealTimers();
});

describe("polling Knock's inbox", () => {
  it('asks once per poll, sends the ETag back, and a 304 changes nothing', async () => {
    const server = await aliceWithTwoPendingRequests();

    expect(await callsOf(server)).toEqual(WITH_ALERTS);
    const first = await storedInbox();
    expect(first?.sources.map((s) => [s.kind, s.fullPath, s.title, s.approverLevel, s.requests.map((r) => r.username)])).toEqual([
      ['group', 'acme', 'acme', 50, ['bob']],
      ['project', 'acme/website', 'website', 40, ['carol']],
    ]);
    expect(first?.api).toEqual({ kind: 'inbox', etag: expect.stringMatching(/^W\/"/) });
    const writes: unknown[] = [];
    inboxItem.watch((inbox) => writes.push(inbox[SERVER]?.sources));

    expect(await callsOf(server)).toEqual(INBOX_ONLY);
    expect(server.inboxConditions).toEqual([null, first?.api?.kind === 'inbox' && first.api.etag]);
    expect((await storedInbox())?.sources).toEqual(first?.sources);
    expect(writes.every((sources) => JSON.stringify(sources) === JSON.stringify(first?.sources))).toBe(true);
    expect(await badgeText()).toBe('2');
  });

  it('stores a changed inbox with its new ETag, and the badge follows', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    const etag = (await storedInbox())?.api;

    server.sources[1]!.requests.push(accessRequest(4, 'dave', 'Dave Dev', HOURS_AGO(0)));
    server.sources[0]!.requests = [];
    await refreshInbox();

    expect(server.inboxConditions.at(-1)).toBe(etag?.kind === 'inbox' && etag.etag);
    const stored = await storedInbox();
    expect(stored?.api).not.toEqual(etag);
    expect(stored?.sources.map((s) => [s.fullPath, s.requests.map((r) => r.username)])).toEqual([['acme/website', ['carol', 'dave']]]);
    expect(await badgeText()).toBe('2');
  });

  it('reads every page when there is more than one, and only the first when nothing changed', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.sources[2]!.requests = [accessRequest(5, 'erin', 'Erin', HOURS_AGO(0.5)), accessRequest(6, 'frank', 'Frank', HOURS_AGO(0.2))];
    server.inboxPageSize = 2;

    expect((await callsOf(server)).filter((call) => call === 'GET /api/v4/access_requests')).toHaveLength(2);
    expect((await storedInbox())?.sources.flatMap((s) => s.requests.map((r) => r.username))).toEqual(['bob', 'erin', 'frank', 'carol']);
    expect(await badgeText()).toBe('4');

    expect(await callsOf(server)).toEqual(INBOX_ONLY);
  });

  it("asks for the user's own requests after sign-in, at every poll while one is pending, after asking here, and hourly", async () => {
    const server = await aliceWithTwoPendingRequests();
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    expect(await callsOf(server)).toEqual(WITH_ALERTS);
    expect(await callsOf(server)).toEqual(INBOX_ONLY);

    // Asked for elsewhere (the console, curl): seen within the hour, then at every poll while pending.
    server.ownRequests = [ownRequest({ status: 'pending', decided_at: null })];
    vi.advanceTimersByTime(OWN_RECHECK_MS - 60_000);
    // (The alerts are due every ALERTS_RECHECK_MS.)
    expect(await callsOf(server)).toEqual([...INBOX_ONLY, 'GET /api/v4/user/access_alerts']);
    vi.advanceTimersByTime(60_000);
    expect(await callsOf(server)).toEqual(INBOX_POLL);
    expect((await storedInbox())?.own).toEqual(server.ownRequests);
    expect(await callsOf(server)).toEqual(INBOX_POLL);

    // Decided: the poll that finds it is the last to ask until something is pending again.
    server.ownRequests = [ownRequest({ status: 'denied', decided_at: new Date().toISOString() })];
    expect(await callsOf(server)).toEqual(INBOX_POLL);
    expect(await callsOf(server)).toEqual(INBOX_ONLY);
    expect((await storedInbox())?.own?.map((r) => r.status)).toEqual(['denied']);

    // Asking for access through the extension: the next poll asks.
    await recheckOwnRequests(SERVER);
    expect(await callsOf(server)).toEqual(INBOX_POLL);
  });

  it('counts on the badge only the requests the owner can act on, not their own', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.ownRequests = [ownRequest({ status: 'pending', decided_at: null })];

    await refreshInbox();

    expect((await storedInbox())?.own).toEqual(server.ownRequests);
    expect(await badgeText()).toBe('2');
  });
});

describe('a server without the inbox (a plain GitLab, an older Knock)', () => {
  it('is asked source by source after its 404, and remembered as such', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.plainGitLab = true;

    const calls = await callsOf(server);
    expect(calls).toEqual(expect.arrayContaining(['GET /api/v4/access_requests', 'GET /api/v4/groups', 'GET /api/v4/groups/10/access_requests']));
    expect(await storedInbox()).toMatchObject({ api: { kind: 'per-source', probedAt: expect.any(Number) }, own: null, problem: null });
    expect((await storedInbox())?.sources.map((s) => [s.fullPath, s.title, s.approverLevel])).toEqual([
      ['acme', 'acme', 50],
      ['acme/website', 'acme / website', 40],
    ]);
    expect(await badgeText()).toBe('2');

    const next = await callsOf(server);
    expect(next).not.toContain('GET /api/v4/access_requests');
    expect(next).toContain('GET /api/v4/projects/20/access_requests');
  });

  it('is asked for the inbox again a day later, and after the next sign-in', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-23T08:00:00.000Z'), toFake: ['Date'] });
    const server = await aliceWithTwoPendingRequests();
    server.plainGitLab = true;
    await refreshInbox();

    vi.advanceTimersByTime(REPROBE_MS - 60_000);
    expect(await callsOf(server)).not.toContain('GET /api/v4/access_requests');
    vi.advanceTimersByTime(60_000);
    expect(await callsOf(server)).toContain('GET /api/v4/access_requests');
    expect(await callsOf(server)).not.toContain('GET /api/v4/access_requests');

    vi.advanceTimersByTime(60_000);
    const account = (await accountsItem.getValue())[SERVER]!;
    await setEntry(accountsItem, SERVER, { ...account, signedInAt: Date.now() }); // signed in again
    server.plainGitLab = false; // ...to a server updated meanwhile
    expect(await callsOf(server)).toEqual(WITH_ALERTS);
    expect((await storedInbox())?.api).toMatchObject({ kind: 'inbox' });
  });

  it('falls back at once when a server that had the inbox stops offering it', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    server.plainGitLab = true;

    expect(await callsOf(server)).toContain('GET /api/v4/groups/10/access_requests');
    expect(await storedInbox()).toMatchObject({ api: { kind: 'per-source' }, problem: null, own: null });
    expect(await badgeText()).toBe('2');
  });
});

function ownRequest(fields: Partial<OwnAccessRequest> = {}): OwnAccessRequest {
  return {
    source_type: 'Project',
    source_id: 30,
    source_full_path: 'beta/api',
    source_name: 'api',
    requested_at: '2026-11-20T09:00:00.000Z',
    status: 'pending',
    access_level: null,
    expires_at: null,
    decided_at: null,
    decided_by: null, reason: null, denial_reason: null, requested_access_level: null, requested_expires_at: null,
    ...fields,
  };
}

describe("a requester's notifications", () => {
  const approved = (at: string) => ownRequest({ status: 'approved', access_level: 30, expires_at: '2027-01-31', decided_at: at });

  it('come once when a request is approved or denied: not again after a re-poll or a restart', async () => {
    const server = await aliceWithTwoPendingRequests();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: true });
    server.sources.forEach((s) => (s.requests = []));
    server.ownRequests = [ownRequest(), ownRequest({ source_type: 'Namespace', source_id: 40, source_full_path: 'gamma', source_name: 'Gamma' })];
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    await refreshInbox();
    expect(created).not.toHaveBeenCalled();

    const now = new Date().toISOString();
    server.ownRequests = [approved(now), { ...server.ownRequests[1]!, status: 'denied', decided_at: now }];
    await refreshInbox();
    await refreshInbox();
    expect(created.mock.calls).toEqual([
      [
        `${SERVER} project:30:2026-11-20T09:00:00.000Z:approved`,
        expect.objectContaining({
          title: 'Access granted to beta/api',
          message: 'Approved as Developer until 2027-01-31: your request for project beta/api on knock.test',
        }),
      ],
      [
        `${SERVER} group:40:2026-11-20T09:00:00.000Z:denied`,
        expect.objectContaining({ title: 'Access to gamma denied', message: 'Denied: your request for group gamma on knock.test' }),
      ],
    ]);

    // The browser restarts: session storage and the notifications shown are gone, local storage is not.
    await fakeBrowser.storage.session.clear();
    for (const id of Object.keys((await fakeBrowser.notifications.getAll()) as object)) await fakeBrowser.notifications.clear(id);
    await refreshInbox();
    expect(created).toHaveBeenCalledTimes(2);
  });

  it('warn once when an approved access is about to end: an hour before a date-time end', async () => {
    const server = await aliceWithTwoPendingRequests();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: true });
    server.sources.forEach((s) => (s.requests = []));
    const soon = new Date(Date.now() + 30 * 60_000).toISOString().slice(0, 16) + ':00.000Z';
    const later = new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 16) + ':00.000Z';
    server.ownRequests = [
      ownRequest({ status: 'approved', access_level: 30, expires_at: soon, decided_at: new Date(Date.now() - 60_000).toISOString() }),
      ownRequest({ source_id: 31, source_full_path: 'beta/web', status: 'approved', access_level: 30, expires_at: later, decided_at: new Date(Date.now() - 60_000).toISOString() }),
    ];
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    await refreshInbox();
    await recheckOwnRequests(SERVER);
    await refreshInbox();
    await refreshInbox();
    const expiring = created.mock.calls.filter(([id]) => String(id).includes(':expiring:'));
    expect(expiring).toEqual([[`${SERVER} project:30:2026-11-20T09:00:00.000Z:expiring:${soon}`, expect.objectContaining({ title: 'Your access to beta/api ends soon' })]]);
  });

  it('come again for a request asked again and approved again', async () => {
    const server = await aliceWithTwoPendingRequests();
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    server.sources.forEach((s) => (s.requests = []));
    server.ownRequests = [approved(new Date().toISOString())];
    await refreshInbox();

    // Asked again through the extension, and approved again before the next poll.
    server.ownRequests = [...server.ownRequests, approved(new Date().toISOString())].map((r, i) =>
      i === 1 ? { ...r, requested_at: '2026-11-22T09:00:00.000Z' } : r,
    );
    await recheckOwnRequests(SERVER);
    await refreshInbox();
    expect(created).toHaveBeenCalledTimes(2);
  });

  it('do not come for outcomes decided before the sign-in, nor for withdrawn or expired requests', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.sources.forEach((s) => (s.requests = []));
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    const now = new Date().toISOString();
    server.ownRequests = [
      approved(new Date(Date.now() - 3600_000).toISOString()),
      ownRequest({ source_id: 31, status: 'withdrawn', decided_at: now }),
      ownRequest({ source_id: 32, status: 'expired', access_level: 30, expires_at: '2026-11-22', decided_at: now }),
    ];

    await refreshInbox();

    expect(created).not.toHaveBeenCalled();
  });

  it('are not shown when turned off, and stay quiet when turned on again', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.sources.forEach((s) => (s.requests = []));
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: false });
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    server.ownRequests = [approved(new Date().toISOString())];

    await refreshInbox();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: true });
    await refreshInbox();

    expect(created).not.toHaveBeenCalled();
  });

  it('are decided one refresh at a time: two refreshes at once announce an outcome once', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.sources.forEach((s) => (s.requests = []));
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    server.ownRequests = [approved(new Date().toISOString())];

    await Promise.all([refreshInbox(), refreshInbox()]);

    expect(created).toHaveBeenCalledTimes(1);
  });
});

describe("a manager's alerts", () => {
  const alert = (fields: Partial<AccessAlert> = {}): AccessAlert => ({
    source_type: 'Project',
    source_id: 30,
    source_full_path: 'beta/api',
    source_name: 'API',
    action: 'break_glass',
    user: { id: 7, username: 'bob', name: 'Bob' },
    access_level: 40,
    expires_at: '2026-11-26T13:00:00.000Z',
    at: '2026-11-26T12:00:03.000Z',
    reason: 'outage',
    ...fields,
  });

  it('come once each (a break-glass grant, access ending soon): not again at the next check, nor after a restart', async () => {
    const server = await aliceWithTwoPendingRequests();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: true });
    server.sources.forEach((s) => (s.requests = []));
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const created = vi.spyOn(fakeBrowser.notifications, 'create');
    await refreshInbox();
    expect(created).not.toHaveBeenCalled();

    server.alerts = [alert(), alert({ action: 'expiring', source_type: 'Namespace', source_id: 40, source_full_path: 'gamma', user: { id: 8, username: 'carol', name: 'Carol' }, access_level: 20, expires_at: '2026-11-27', reason: null })];
    // Heard at the next check of the alerts, not at every poll.
    await refreshInbox();
    expect(created).not.toHaveBeenCalled();
    vi.advanceTimersByTime(ALERTS_RECHECK_MS);
    await refreshInbox();
    expect(created.mock.calls.map((call) => (call as unknown[])[1] as { title: string; message: string }).map((o) => [o.title, o.message])).toEqual([
      ['Break-glass access to beta/api', '@bob took Maintainer until 2026-11-26 13:00 UTC: outage (knock.test)'],
      ["@carol's access to gamma ends soon", 'Reporter until 2026-11-27 (knock.test)'],
    ]);
    vi.advanceTimersByTime(ALERTS_RECHECK_MS);
    await refreshInbox();
    await inboxItem.setValue({}); // as after a restart that lost the list, but not what was told
    await refreshInbox();
    expect(created).toHaveBeenCalledTimes(2);
  });
});
