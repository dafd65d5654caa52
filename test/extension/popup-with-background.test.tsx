// The popup and the background together, over the real message channel (@webext-core/messaging
// on WXT's fake browser) and against the fake Knock: the popup sends commands, the background
// talks to the server and stores the inbox, the popup shows what is stored.

import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeBrowser } from 'wxt/testing/fake-browser';
import type { PopupActions } from '../../extension/components/popup-actions';
import { PopupApp } from '../../extension/components/PopupApp';
import { backgroundCommands } from '../../extension/lib/background';
import { commands, handleCommands } from '../../extension/lib/messaging';
import { accessRequest, createFakeKnock, type FakeKnock } from './fake-knock';
import { serveFrom, signedInTo, signedInToFakeKnock } from './signed-in';

const HOURS_AGO = (hours: number) => new Date(Date.now() - hours * 3600_000).toISOString();

let stopHandling: () => void = () => undefined;
/** The types of the messages the popup sent. */
let sent: string[] = [];

beforeEach(() => {
  // @webext-core/messaging talks through `chrome.runtime`; here that is WXT's fake browser.
  vi.stubGlobal('chrome', fakeBrowser);
  stopHandling = handleCommands(backgroundCommands);
  sent = [];
  const send = fakeBrowser.runtime.sendMessage.bind(fakeBrowser.runtime);
  vi.spyOn(fakeBrowser.runtime, 'sendMessage').mockImplementation((...args: Parameters<typeof send>) => {
    const message: unknown = args[0];
    if (message && typeof message === 'object' && 'type' in message) sent.push(String(message.type));
    return send(...args);
  });
});

afterEach(() => {
  stopHandling();
});

const popupActions: PopupActions = { ...commands, openOptions: vi.fn() };

async function aliceWithTwoPendingRequests(): Promise<FakeKnock> {
  const server = await signedInToFakeKnock();
  server.addGroup(10, 'acme', 50, [accessRequest(2, 'bob', 'Bob Builder', HOURS_AGO(2))]);
  server.addProject(20, 'acme/website', 40, [accessRequest(3, 'carol', 'Carol Coder', HOURS_AGO(1))]);
  return server;
}

const rowOf = (username: string) => screen.getByRole('listitem', { name: new RegExp(`@${username}`) });

describe('the popup with the background', () => {
  it('asks the background to refresh and lists what it stored', async () => {
    await aliceWithTwoPendingRequests();
    render(<PopupApp actions={popupActions} />);

    expect(await screen.findByText('Bob Builder')).toBeTruthy();
    expect(screen.getByText('Carol Coder')).toBeTruthy();
    await screen.findByText('Updated just now');
    expect(sent).toEqual(['refreshInbox']);
  });

  it('removes an approved request before the server answers, and the server gets the chosen level', async () => {
    const server = await aliceWithTwoPendingRequests();
    render(<PopupApp actions={popupActions} />);
    await screen.findByText('Updated just now');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      const response = await server.fetch(url, init);
      if (init?.method === 'PUT') await released;
      return response;
    });

    fireEvent.change(screen.getByRole('combobox', { name: 'Access level for @carol' }), { target: { value: '40' } });
    fireEvent.click(screen.getByRole('button', { name: 'Approve @carol' }));

    await waitFor(() => expect(screen.queryByText('Carol Coder')).toBeNull());
    expect(screen.getByRole('status').textContent).toBe('Approving @carol as Maintainer…');

    release();
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Approved @carol as Maintainer on acme/website.'));
    expect(server.approvals).toEqual([{ kind: 'project', id: 20, userId: 3, accessLevel: 40 }]);
    expect(await fakeBrowser.action.getBadgeText({})).toBe('1');
    expect(sent).toEqual(['refreshInbox', 'approve']);
  });

  it('brings a refused request back with the server’s reason, and focus on it', async () => {
    const server = await aliceWithTwoPendingRequests();
    render(<PopupApp actions={popupActions} />);
    await screen.findByText('Updated just now');
    server.refuseDecisions = { status: 403, message: '403 Forbidden' };

    fireEvent.click(screen.getByRole('button', { name: 'Deny @bob' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm: deny @bob' }));

    await waitFor(() => expect(within(rowOf('bob')).getByRole('alert').textContent).toBe('Could not deny @bob: 403 Forbidden'));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('combobox', { name: 'Access level for @bob' })));
    expect(await fakeBrowser.action.getBadgeText({})).toBe('2');
  });

  it('says when the server asked to slow down, and does not ask it again before time', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.rateLimit = { remaining: 1, retryAfter: '120' };
    render(<PopupApp actions={popupActions} />);

    const alert = await screen.findByRole('alert');
    await waitFor(() => expect(alert.textContent).toContain('knock.test asked to slow down; trying again'));
    const calls = server.calls.length;

    await popupActions.refreshInbox();

    expect(server.calls.length).toBe(calls);
    expect(within(screen.getByRole('region', { name: 'knock.test' })).getByRole('alert').textContent).toContain('asked to slow down');
  });

  it('lists each server’s requests in its own section, and one server down hides nothing of the other', async () => {
    const server = await aliceWithTwoPendingRequests();
    const other = await signedInTo(createFakeKnock('https://other.test'));
    other.addGroup(30, 'beta', 50, [accessRequest(4, 'dave', 'Dave Dev', HOURS_AGO(3))]);
    serveFrom(server, other);
    render(<PopupApp actions={popupActions} />);
    const otherSection = await screen.findByRole('region', { name: 'other.test' });
    await within(otherSection).findByText('Dave Dev');
    await waitFor(async () => expect(await fakeBrowser.action.getBadgeText({})).toBe('3'));

    serveFrom(server); // other.test stops answering
    fireEvent.click(screen.getByRole('button', { name: 'Deny @bob' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm: deny @bob' }));

    await waitFor(() => expect(screen.getByRole('status').textContent).toBe("Denied @bob's request for acme."));
    await popupActions.refreshInbox();
    await waitFor(() =>
      expect(within(otherSection).getByRole('alert').textContent).toContain('other.test is not answering (Could not reach https://other.test).'),
    );
    expect(within(otherSection).getByText('Dave Dev')).toBeTruthy(); // as it last listed them
    expect(within(screen.getByRole('region', { name: 'knock.test' })).getByText('Carol Coder')).toBeTruthy();
    expect(await fakeBrowser.action.getBadgeText({})).toBe('2');
  });
});

describe('your requests, with the background', () => {
  it('are fetched with the inbox and shown; withdrawing one tells the server and shows it withdrawn', async () => {
    const server = await aliceWithTwoPendingRequests();
    server.ownRequests = [
      {
        source_type: 'Namespace',
        source_id: 40,
        source_full_path: 'gamma',
        source_name: 'Gamma',
        requested_at: HOURS_AGO(3),
        status: 'pending',
        access_level: null,
        expires_at: null,
        decided_at: null,
        decided_by: null, reason: null, denial_reason: null, requested_access_level: null, requested_expires_at: null,
      },
    ];
    render(<PopupApp actions={popupActions} />);

    const section = await screen.findByRole('region', { name: 'Your requests on knock.test' });
    expect(within(section).getByRole('listitem').textContent).toContain('Pending, asked 3 hours ago');
    fireEvent.click(within(section).getByRole('button', { name: 'Withdraw your request for gamma' }));

    await waitFor(() => expect(within(section).getByRole('listitem').textContent).toContain('Withdrawn, just now'));
    expect(server.ownRequests[0]).toMatchObject({ status: 'withdrawn' });
    expect(within(section).queryByRole('button')).toBeNull();
  });
});
