import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import { refreshInbox } from '../../extension/lib/inbox';
import { countRequests } from '../../extension/lib/pending-requests';
import { onPollAlarm, POLL_ALARM, schedulePolling } from '../../extension/lib/polling';
import { approve as approveOn, deny as denyOn } from '../../extension/lib/request-actions';
import { accountsItem, inboxItem, settingsItem } from '../../extension/lib/stored-values';
import { accessRequest, SERVER, type FakeKnock } from './fake-knock';
import { aliceWithTwoPendingRequests, HOURS_AGO, signedInToFakeKnock } from './signed-in';


const badgeText = () => fakeBrowser.action.getBadgeText({});

type Target = { kind: 'group' | 'project'; sourceId: number; userId: number };
const approve = (target: Target & { accessLevel: number }) => approveOn({ serverUrl: SERVER, ...target });
const deny = (target: Target) => denyOn({ serverUrl: SERVER, ...target });
/** The stored inbox of the (only) server. */
const storedInbox = async () => (await inboxItem.getValue())[SERVER];
const storedPaths = async () => (await storedInbox())?.sources.map((s) => s.fullPath);

async function notificationIds(): Promise<string[]> {
  const all = (await fakeBrowser.notifications.getAll()) as Record<string, unknown>;
  return Object.keys(all);
}

afterEach(() => {
  vi.useRealTimers();
});

/** Holds the server's answers to `method` requests until released (the server has already acted). */
function holdAnswers(server: FakeKnock, method: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const response = await server.fetch(url, init);
    if ((init?.method ?? 'GET') === method) {
      reached();
      await released;
    }
    return response;
  });
  return { arrived, release };
}

/** Every value the background stores as the inbox, as request counts, from now on. */
function storedCounts(): number[] {
  const counts: number[] = [];
  inboxItem.watch((inbox) => counts.push(countRequests(inbox)));
  return counts;
}

describe('approving and denying, in the background', () => {
  it('takes the request out of the stored inbox and the badge before the server answers', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    const answer = holdAnswers(server, 'PUT');

    const approval = approve({ kind: 'project', sourceId: 20, userId: 3, accessLevel: 40 });
    await answer.arrived;

    expect(await storedPaths()).toEqual(['acme']);
    expect(await badgeText()).toBe('1');

    answer.release();
    await approval;
    expect(server.approvals).toEqual([{ kind: 'project', id: 20, userId: 3, accessLevel: 40 }]);
    expect(await storedPaths()).toEqual(['acme']);
  });

  it('puts a refused request back where it was, and the caller gets the server’s reason', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    const before = await storedInbox();
    server.refuseDecisions = { status: 403, message: '403 Forbidden' };
    const counts = storedCounts();

    await expect(approve({ kind: 'group', sourceId: 10, userId: 2, accessLevel: 30 })).rejects.toThrow('403 Forbidden');

    expect(counts).toEqual([1, 2]); // removed at once, then put back
    expect(await storedInbox()).toEqual(before);
    expect(await badgeText()).toBe('2');
    expect(server.approvals).toEqual([]);
  });

  it('puts a denial back when the server cannot be reached', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    const before = await storedInbox();
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (init?.method === 'DELETE') throw new TypeError('Failed to fetch');
      return server.fetch(url, init);
    });

    await expect(deny({ kind: 'project', sourceId: 20, userId: 3 })).rejects.toThrow(`Could not reach ${SERVER}`);

    expect(await storedInbox()).toEqual(before);
  });

  it('sends one request when the same approval is asked for twice', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();

    await Promise.all([
      approve({ kind: 'group', sourceId: 10, userId: 2, accessLevel: 30 }),
      approve({ kind: 'group', sourceId: 10, userId: 2, accessLevel: 30 }),
    ]);

    expect(server.calls.filter((call) => call.startsWith('PUT'))).toHaveLength(1);
  });

  it('a refresh while the server decides does not bring the request back', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    const answer = holdAnswers(server, 'DELETE');
    server.refuseDecisions = null;

    const denial = deny({ kind: 'group', sourceId: 10, userId: 2 });
    await answer.arrived;
    // The server has already removed it; make it list the request again, as if it had not yet.
    server.sources[0]!.requests.push(accessRequest(2, 'bob', 'Bob Builder', HOURS_AGO(2)));
    await refreshInbox();
    expect(await storedPaths()).toEqual(['acme/website']);

    answer.release();
    await denial;
    expect(await badgeText()).toBe('1');
  });
});

describe('the pending requests', () => {
  it('are the requests of groups the user owns and projects they maintain, grouped and ordered by path', async () => {
    await aliceWithTwoPendingRequests();

    await refreshInbox();

    const inbox = await storedInbox();
    expect(inbox?.sources.map((s) => [s.kind, s.fullPath, s.approverLevel, s.requests.map((r) => r.username)])).toEqual([
      ['group', 'acme', 50, ['bob']],
      ['project', 'acme/website', 40, ['carol']],
    ]);
    expect(inbox?.problem).toBeNull();
  });

  it('say when the user owns a project, since only an Owner may grant Owner there', async () => {
    const server = await signedInToFakeKnock();
    server.addProject(20, 'acme/website', 50, [accessRequest(3, 'carol', 'Carol Coder', HOURS_AGO(1))]);

    await refreshInbox();

    expect((await storedInbox())?.sources[0]).toMatchObject({ kind: 'project', approverLevel: 50 });
  });
});

describe('the toolbar badge', () => {
  it('shows the number of pending requests and follows approvals and denials', async () => {
    await aliceWithTwoPendingRequests();

    await refreshInbox();
    expect(await badgeText()).toBe('2');

    await approve({ kind: 'group', sourceId: 10, userId: 2, accessLevel: 40 });
    expect(await badgeText()).toBe('1');

    await deny({ kind: 'project', sourceId: 20, userId: 3 });
    expect(await badgeText()).toBe('');
  });

  it('is cleared when the session ends', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    server.validAccessTokens.clear();
    server.refreshFailure = { status: 400, body: { error: 'invalid_grant' } };

    await refreshInbox();

    expect(await badgeText()).toBe('');
    expect(await accountsItem.getValue()).toEqual({});
    expect(await storedInbox()).toEqual({
      fetchedAt: null,
      sources: [],
      problem: { kind: 'signed-out', message: 'You were signed out: invalid_grant' },
      api: null,
      own: null,
      ownCheckedAt: null,
    });
  });
});

describe('notifications', () => {
  it('are shown once per new request, never again for the same one', async () => {
    const server = await aliceWithTwoPendingRequests();
    const created = vi.spyOn(fakeBrowser.notifications, 'create');

    await refreshInbox();
    await refreshInbox();
    expect(created).toHaveBeenCalledTimes(2);
    expect(await notificationIds()).toHaveLength(2);

    server.sources[1]!.requests.push(accessRequest(4, 'dave', 'Dave', HOURS_AGO(0)));
    await refreshInbox();
    await refreshInbox();

    expect(created).toHaveBeenCalledTimes(3);
    expect(created.mock.calls[2]![1]).toMatchObject({ title: 'Dave (@dave) asks for access', message: 'to project acme/website on knock.test' });
  });

  it('are not shown when turned off, and old requests stay quiet when they are turned on', async () => {
    await aliceWithTwoPendingRequests();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: false });
    const created = vi.spyOn(fakeBrowser.notifications, 'create');

    await refreshInbox();
    await settingsItem.setValue({ pollMinutes: 5, notificationsEnabled: true });
    await refreshInbox();

    expect(created).not.toHaveBeenCalled();
  });
});

describe('polling', () => {
  it('repeats at the interval from the settings (5 minutes unless changed) while signed in', async () => {
    await aliceWithTwoPendingRequests();

    await schedulePolling();
    expect(await fakeBrowser.alarms.get(POLL_ALARM)).toMatchObject({ periodInMinutes: 5 });

    await settingsItem.setValue({ pollMinutes: 15, notificationsEnabled: true });
    await schedulePolling();
    expect(await fakeBrowser.alarms.get(POLL_ALARM)).toMatchObject({ periodInMinutes: 15 });
  });

  it('stops when signed out', async () => {
    await aliceWithTwoPendingRequests();
    await schedulePolling();

    await accountsItem.setValue({});
    await schedulePolling();

    expect(await fakeBrowser.alarms.get(POLL_ALARM)).toBeFalsy();
  });

  it('refreshes the list and badge when the alarm fires', async () => {
    await aliceWithTwoPendingRequests();

    await onPollAlarm({ name: POLL_ALARM });

    expect(await badgeText()).toBe('2');
  });

  it('waits out a 429 for as long as Retry-After says', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const server = await aliceWithTwoPendingRequests();
    server.rateLimit = { remaining: 1, retryAfter: '120' };

    await onPollAlarm({ name: POLL_ALARM });
    const callsAfterThrottle = server.calls.length;

    vi.advanceTimersByTime(119_000);
    await onPollAlarm({ name: POLL_ALARM });
    await refreshInbox();
    expect(server.calls.length).toBe(callsAfterThrottle);
    expect((await storedInbox())?.problem).toMatchObject({ kind: 'rate-limited', message: expect.stringContaining('knock.test asked to slow down') });

    vi.advanceTimersByTime(2_000);
    await onPollAlarm({ name: POLL_ALARM });
    expect(server.calls.length).toBeGreaterThan(callsAfterThrottle);
    expect(await badgeText()).toBe('2');
  });
});

describe('a refresh that was under way during a decision', () => {
  it('does not bring back the request that was just denied', async () => {
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();
    let releaseListing!: () => void;
    const listingHeld = new Promise<void>((resolve) => (releaseListing = resolve));
    let listingReached!: () => void;
    const reached = new Promise<void>((resolve) => (listingReached = resolve));
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      const response = await server.fetch(url, init); // the server answers with the list as it is now...
      if (url.includes('/api/v4/access_requests?')) {
        listingReached();
        await listingHeld; // ...but the answer arrives only after the denial below
      }
      return response;
    });

    const slowRefresh = refreshInbox();
    await reached;
    await deny({ kind: 'group', sourceId: 10, userId: 2 });
    releaseListing();
    await slowRefresh;

    expect(await storedPaths()).toEqual(['acme/website']);
    expect(await badgeText()).toBe('1');
  });
});

describe('a decision confirmed before a refresh started', () => {
  // The order of a decision and a refresh is the order they happened in, not the clock's reading:
  // a millisecond holds many of both, and the clock may be set back.
  it.each([
    ['in the same millisecond', 0],
    ['after the clock was set back', -3_600_000],
  ])('does not hide the same user asking again, %s', async (_when, clockStep) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const server = await aliceWithTwoPendingRequests();
    await refreshInbox();

    await deny({ kind: 'group', sourceId: 10, userId: 2 });
    vi.setSystemTime(Date.now() + clockStep);
    server.sources[0]!.requests.push(accessRequest(2, 'bob', 'Bob Builder', HOURS_AGO(0)));
    await refreshInbox();

    expect(await storedPaths()).toEqual(['acme', 'acme/website']);
    expect(await badgeText()).toBe('2');
  });
});
