import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import type { PopupActions } from '../../extension/components/popup-actions';
import { PopupApp } from '../../extension/components/PopupApp';
import type { RequestTarget } from '../../extension/lib/messaging';
import { withoutRequest, type PendingSource } from '../../extension/lib/pending-requests';
import { accountsItem, inboxItem, serversItem, type ServerInbox } from '../../extension/lib/stored-values';
import type { OwnAccessRequest } from '../../shared/api-types';
import { accessRequest, SERVER } from './fake-knock';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');

const SOURCES: PendingSource[] = [
  {
      kind: 'group',
      id: 10,
      fullPath: 'acme',
      title: 'Acme',
      approverLevel: 50,
      requests: [accessRequest(2, 'bob', 'Bob Builder', '2026-11-21T10:00:00.000Z')],
    },
    {
      kind: 'project',
      id: 20,
      fullPath: 'acme/website',
      title: 'Acme / Website',
      approverLevel: 40,
      requests: [accessRequest(3, 'carol', 'Carol Coder', '2026-11-21T11:30:00.000Z')],
    },
];

/** The stored inbox with `sources` as the one server's list. */
const listing = (
  sources: PendingSource[],
  fetchedAt: number | null = NOW - 60_000,
  problem: ServerInbox['problem'] = null,
  own: ServerInbox['own'] = null,
): Record<string, ServerInbox> => ({
  [SERVER]: { fetchedAt, sources, problem, api: { kind: 'inbox', etag: null }, own, ownCheckedAt: fetchedAt },
});
const INBOX = listing(SOURCES);

/** A promise the test settles when it wants to. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What the background does to the stored inbox when a request is approved or denied. */
async function backgroundRemoves({ serverUrl, kind, sourceId, userId }: RequestTarget) {
  const inbox = await inboxItem.getValue();
  const list = inbox[serverUrl];
  if (list) await inboxItem.setValue({ ...inbox, [serverUrl]: { ...list, sources: withoutRequest(list.sources, kind, sourceId, userId) } });
}

/**
 * Commands as the background would answer them; the list itself is in storage, where the tests
 * put it (as the background would). Approving and denying remove the request from storage.
 */
function fakeActions(overrides: Partial<PopupActions> = {}): PopupActions {
  return {
    refreshInbox: vi.fn(async () => undefined),
    approve: vi.fn(backgroundRemoves),
    deny: vi.fn(backgroundRemoves),
    requestAccess: vi.fn(async () => accessRequest(1, 'alice', 'Alice', new Date(NOW).toISOString())),
    withdraw: vi.fn(async () => undefined),
    signIn: vi.fn(async () => ({ serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth' as const, signedInAt: NOW })),
    openOptions: vi.fn(),
    ...overrides,
  };
}

/** Signed in, with `inbox` as the background last stored it. */
async function signedIn(inbox: Record<string, ServerInbox> = INBOX) {
  await serversItem.setValue([SERVER]);
  await accountsItem.setValue({ [SERVER]: { serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth', signedInAt: NOW } });
  await inboxItem.setValue(inbox);
}

const rowOf = (username: string) => screen.getByRole('listitem', { name: new RegExp(`@${username}`) });

describe('the popup, signed in', () => {
  it('lists each request under its group or project with name, @username and how long ago', async () => {
    await signedIn();
    render(<PopupApp actions={fakeActions()} now={NOW} />);

    const group = await screen.findByRole('region', { name: /Group Acme/ });
    const bob = within(group).getByRole('listitem', { name: 'Bob Builder (@bob)' });
    expect(bob.textContent).toContain('Bob Builder');
    expect(bob.textContent).toContain('@bob');
    expect(bob.textContent).toContain('requested 2 hours ago');
    const project = screen.getByRole('region', { name: /Project Acme \/ Website/ });
    expect(within(project).getByRole('listitem').textContent).toContain('requested 30 minutes ago');
  });

  it('shows the stored list at once, asks the background for a refresh, and shows what it stores next', async () => {
    await signedIn();
    const answer = deferred<void>();
    const actions = fakeActions({ refreshInbox: vi.fn(() => answer.promise) });
    render(<PopupApp actions={actions} now={NOW} />);

    expect(await screen.findByText('Bob Builder')).toBeTruthy();
    expect(screen.getByText('Updating…')).toBeTruthy();
    expect(actions.refreshInbox).toHaveBeenCalledTimes(1);

    await inboxItem.setValue(listing([SOURCES[1]!], NOW)); // the background's write
    answer.resolve();

    await waitFor(() => expect(screen.queryByText('Bob Builder')).toBeNull());
    expect(screen.getByText('Carol Coder')).toBeTruthy();
    expect(await screen.findByText('Updated just now')).toBeTruthy();
  });

  it('follows the stored list while open, whoever changed it', async () => {
    await signedIn();
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');

    const dave = accessRequest(4, 'dave', 'Dave Dev', '2026-11-21T11:59:00.000Z');
    await inboxItem.setValue(listing([{ ...SOURCES[0]!, requests: [dave] }], NOW)); // a poll

    expect(await screen.findByText('Dave Dev')).toBeTruthy();
    expect(screen.queryByText('Bob Builder')).toBeNull();
    expect(screen.queryByText('Carol Coder')).toBeNull();
  });

  it('says it is loading when nothing was stored yet', async () => {
    await signedIn({});
    render(<PopupApp actions={fakeActions({ refreshInbox: () => new Promise(() => {}) })} now={NOW} />);

    expect(await screen.findByText('Loading access requests…')).toBeTruthy();
  });

  it('says so when nothing is waiting', async () => {
    await signedIn(listing([], NOW));
    render(<PopupApp actions={fakeActions()} now={NOW} />);

    expect(await screen.findByText('No pending access requests here.')).toBeTruthy();
  });

  it('shows why a server could not be asked, keeps what it listed before, and tries again on request', async () => {
    await signedIn(listing(SOURCES, NOW - 120_000, { kind: 'unreachable', message: 'Could not reach https://knock.test' }));
    const refreshInbox = vi.fn<PopupActions['refreshInbox']>().mockResolvedValueOnce(undefined).mockImplementationOnce(async () => inboxItem.setValue(INBOX));
    render(<PopupApp actions={fakeActions({ refreshInbox })} now={NOW} />);

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain(
      'knock.test is not answering (Could not reach https://knock.test). These are the requests it listed 2 minutes ago.',
    );
    expect(screen.getByText('Bob Builder')).toBeTruthy();

    await waitFor(() => expect(within(alert).getByRole('button', { name: 'Try again' }).hasAttribute('disabled')).toBe(false));
    fireEvent.click(within(alert).getByRole('button', { name: 'Try again' }));

    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
    expect(refreshInbox).toHaveBeenCalledTimes(2);
  });
});

describe('the level picker', () => {
  const optionsFor = (username: string) =>
    within(rowOf(username))
      .getAllByRole('option')
      .map((option) => option.textContent);

  it('offers exactly the levels the approver may grant on the kind, Developer first chosen', async () => {
    const ownedProject = { ...SOURCES[1]!, id: 21, fullPath: 'acme/api', title: 'Acme / API', approverLevel: 50, requests: [accessRequest(4, 'dave', 'Dave', '2026-11-21T11:00:00.000Z')] };
    await signedIn(listing([...SOURCES, ownedProject]));
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');

    expect(optionsFor('bob')).toEqual(['Minimal access', 'Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
    expect(optionsFor('carol')).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer']);
    expect(optionsFor('dave')).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
    const picker = screen.getByRole('combobox', { name: 'Access level for @carol' }) as HTMLSelectElement;
    expect(picker.selectedOptions[0]!.textContent).toBe('Developer');
  });
});

describe('approving and denying', () => {
  it('sends the approval at the chosen level; the row leaves when the background stores the list without it', async () => {
    await signedIn();
    const approval = deferred<void>();
    const actions = fakeActions({ approve: vi.fn(() => approval.promise) });
    render(<PopupApp actions={actions} now={NOW} />);
    await screen.findByText('Carol Coder');

    fireEvent.change(screen.getByRole('combobox', { name: 'Access level for @carol' }), { target: { value: '40' } });
    fireEvent.click(screen.getByRole('button', { name: 'Approve @carol' }));

    expect(actions.approve).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'project', sourceId: 20, userId: 3, accessLevel: 40 });
    expect(screen.getByRole('status').textContent).toBe('Approving @carol as Maintainer…');
    expect(screen.getByText('Carol Coder')).toBeTruthy(); // the popup keeps no list of its own

    await backgroundRemoves({ serverUrl: SERVER, kind: 'project', sourceId: 20, userId: 3 });
    await waitFor(() => expect(screen.queryByText('Carol Coder')).toBeNull());

    approval.resolve();
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Approved @carol as Maintainer on acme/website.'));
    expect(screen.queryByText('Carol Coder')).toBeNull();
  });

  it('shows the server’s reason next to a request the background put back', async () => {
    await signedIn();
    // The background removes the request, the server refuses, the background puts it back.
    const approve = vi.fn(async (target: RequestTarget) => {
      await backgroundRemoves(target);
      await inboxItem.setValue(INBOX);
      throw new Error('403 Forbidden');
    });
    render(<PopupApp actions={fakeActions({ approve })} now={NOW} />);
    await screen.findByText('Bob Builder');

    fireEvent.click(screen.getByRole('button', { name: 'Approve @bob' }));

    await waitFor(() => expect(within(rowOf('bob')).getByRole('alert').textContent).toBe('Could not approve @bob: 403 Forbidden'));
    expect(approve).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'group', sourceId: 10, userId: 2, accessLevel: 30 });
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('combobox', { name: 'Access level for @bob' })));
  });

  it('asks before it sends the denial, and says what happened', async () => {
    await signedIn();
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);
    await screen.findByText('Bob Builder');

    fireEvent.click(screen.getByRole('button', { name: 'Deny @bob' }));
    // Deny asks first, beside the request; Cancel keeps it.
    expect(screen.getByText("Deny @bob's request?")).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Confirm: deny @bob' }));
    fireEvent.click(screen.getByRole('button', { name: "Keep @bob's request" }));
    expect(actions.deny).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(screen.getByRole('combobox', { name: 'Access level for @bob' }));

    fireEvent.click(screen.getByRole('button', { name: 'Deny @bob' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm: deny @bob' }));

    expect(actions.deny).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'group', sourceId: 10, userId: 2 });
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe("Denied @bob's request for acme."));
    expect(screen.queryByText('Bob Builder')).toBeNull();
  });

  it('moves keyboard focus to the next request, then to the outcome when none is left', async () => {
    await signedIn();
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');

    screen.getByRole('button', { name: 'Approve @bob' }).focus();
    fireEvent.click(screen.getByRole('button', { name: 'Approve @bob' }));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('combobox', { name: 'Access level for @carol' })));

    fireEvent.click(screen.getByRole('button', { name: 'Deny @carol' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm: deny @carol' }));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('status')));
  });

  it('uses only native buttons and selects, so every control is reachable and usable by keyboard', async () => {
    await signedIn();
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');

    for (const control of [...screen.getAllByRole('button'), ...screen.getAllByRole('combobox')]) {
      expect(['BUTTON', 'SELECT']).toContain(control.tagName);
      expect(control.getAttribute('tabindex')).not.toBe('-1');
      expect(control.hasAttribute('disabled')).toBe(false);
    }
  });
});

describe('what a request asked', () => {
  it('shows the reason, the level and end asked, and the approvals so far; approving what was asked is one click', async () => {
    const erin = {
      ...accessRequest(5, 'erin', 'Erin Ops', '2026-11-21T11:45:00.000Z'),
      reason: 'to fix the release',
      access_level: 30,
      expires_at: '2026-11-21T20:00:00.000Z',
      approvals_required: 2,
      approvals: [{ id: 9, username: 'dan', name: 'Dan', approved_at: '2026-11-21T11:50:00.000Z' }],
    };
    await signedIn(listing([{ ...SOURCES[1]!, requests: [erin] }]));
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);
    const row = await screen.findByRole('listitem', { name: 'Erin Ops (@erin)' });
    expect(within(row).getByText('to fix the release')).toBeTruthy();
    expect(row.textContent).toContain('asks for Developer');
    expect(row.textContent).toContain('until 2026-11-21 20:00 UTC');
    expect(row.textContent).toContain('1 of 2 approvals');
    expect((within(row).getByRole('combobox', { name: 'Access level for @erin' }) as HTMLSelectElement).value).toBe('30');
    fireEvent.click(within(row).getByRole('button', { name: 'Approve @erin' }));
    expect(actions.approve).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'project', sourceId: 20, userId: 5, accessLevel: 30 });
  });
});

describe('requesting access', () => {
  it('sends the reason, the level and the duration asked for', async () => {
    await signedIn();
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Request access' }));
    fireEvent.input(screen.getByRole('textbox', { name: 'Path' }), { target: { value: 'acme/website' } });
    fireEvent.input(screen.getByRole('textbox', { name: 'Why' }), { target: { value: 'to fix the release' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Level' }), { target: { value: '30' } });
    const durations = screen.getByRole('combobox', { name: 'For' }) as HTMLSelectElement;
    expect([...durations.options].map((o) => o.text)).toEqual(['1 hour', '8 hours', '1 day', '1 week', '30 days', 'No end']);
    fireEvent.change(durations, { target: { value: '1' } });
    fireEvent.submit(screen.getByRole('textbox', { name: 'Path' }).closest('form')!);

    expect(await screen.findByText('Access requested to project acme/website. Its owners will see your request.')).toBeTruthy();
    expect(actions.requestAccess).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'project', path: 'acme/website', reason: 'to fix the release', accessLevel: 30, hours: 8 });
  });

  it('asks for access to a project by its path', async () => {
    await signedIn();
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Request access' }));
    fireEvent.input(screen.getByRole('textbox', { name: 'Path' }), { target: { value: 'acme/website' } });
    fireEvent.submit(screen.getByRole('textbox', { name: 'Path' }).closest('form')!);

    expect(await screen.findByText('Access requested to project acme/website. Its owners will see your request.')).toBeTruthy();
    expect(actions.requestAccess).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'project', path: 'acme/website' });
  });

  it('asks for access to a group, and shows the server’s refusal', async () => {
    await signedIn();
    const actions = fakeActions({ requestAccess: vi.fn(async () => Promise.reject(new Error('404 Group Not Found'))) });
    render(<PopupApp actions={actions} now={NOW} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Request access' }));
    fireEvent.click(screen.getByRole('radio', { name: 'a group' }));
    fireEvent.input(screen.getByRole('textbox', { name: 'Path' }), { target: { value: 'nope' } });
    fireEvent.submit(screen.getByRole('textbox', { name: 'Path' }).closest('form')!);

    expect((await screen.findByRole('alert')).textContent).toBe('Could not request access to nope: 404 Group Not Found');
    expect(actions.requestAccess).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'group', path: 'nope' });
  });
});

describe('your requests', () => {
  const own = (fields: Partial<OwnAccessRequest>): OwnAccessRequest => ({
    source_type: 'Project',
    source_id: 30,
    source_full_path: 'beta/api',
    source_name: 'API',
    requested_at: '2026-11-21T09:00:00.000Z',
    status: 'pending',
    access_level: null,
    expires_at: null,
    decided_at: null,
    decided_by: null, reason: null, denial_reason: null, requested_access_level: null, requested_expires_at: null,
    ...fields,
  });
  const OWN = [
    own({ source_id: 31, source_full_path: 'beta/old', status: 'denied', requested_at: '2026-11-01T09:00:00.000Z', decided_at: '2026-11-02T09:00:00.000Z' }),
    own({ source_id: 32, source_full_path: 'beta/docs', status: 'approved', access_level: 30, expires_at: '2027-01-31', requested_at: '2026-11-10T09:00:00.000Z', decided_at: '2026-11-21T11:00:00.000Z' }),
    own({ source_id: 33, source_full_path: 'beta/gone', status: 'expired', access_level: 20, expires_at: '2026-11-20', requested_at: '2026-10-10T09:00:00.000Z', decided_at: '2026-10-11T09:00:00.000Z' }),
    own({ source_id: 34, source_full_path: 'beta/www', status: 'withdrawn', requested_at: '2026-11-15T09:00:00.000Z', decided_at: '2026-11-16T09:00:00.000Z' }),
    own({ source_type: 'Namespace', source_id: 40, source_full_path: 'gamma', requested_at: '2026-11-21T10:00:00.000Z' }),
  ];

  it('lists each server’s pending requests first, then how the others ended, latest first, with level and expiry', async () => {
    await signedIn(listing(SOURCES, NOW - 60_000, null, OWN));
    render(<PopupApp actions={fakeActions()} now={NOW} />);

    const section = await screen.findByRole('region', { name: 'Your requests on knock.test' });
    const rows = within(section).getAllByRole('listitem').map((row) => row.textContent);
    expect(rows).toEqual([
      'Group gammaPending, asked 2 hours agoWithdraw',
      'Project beta/docsApproved as Developer until 2027-01-31, 1 hour ago',
      'Project beta/wwwWithdrawn, 5 days ago',
      'Project beta/oldDenied, 2 weeks ago',
      'Project beta/goneExpired on 2026-11-20, 1 month ago',
    ]);
    expect(screen.getByRole('region', { name: /Group Acme/ })).toBeTruthy(); // the owner's inbox is still there
  });

  it('is not shown where the server does not say (a plain GitLab) or nothing was asked', async () => {
    await signedIn(listing(SOURCES, NOW - 60_000, null, null));
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');
    expect(screen.queryByRole('region', { name: /Your requests/ })).toBeNull();
  });

  it('withdraws a pending request, and shows the server’s refusal', async () => {
    await signedIn(listing([], NOW - 60_000, null, OWN));
    const actions = fakeActions({ withdraw: vi.fn(async () => Promise.reject(new Error('404 Not found'))) });
    render(<PopupApp actions={actions} now={NOW} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Withdraw your request for gamma' }));

    expect(actions.withdraw).toHaveBeenCalledWith({ serverUrl: SERVER, kind: 'group', sourceId: 40 });
    expect((await screen.findByRole('alert')).textContent).toBe('Could not withdraw: 404 Not found');
  });
});

describe('the popup, signed out', () => {
  it('offers to sign in to each server it is signed out of', async () => {
    await serversItem.setValue([SERVER]);
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);

    expect(await screen.findByText('You are signed out of knock.test.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));

    expect(actions.signIn).toHaveBeenCalledWith(SERVER);
  });

  it('sends a new user to the options to add a server', async () => {
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Open options' }));

    expect(actions.openOptions).toHaveBeenCalled();
  });

  it('switches to the signed-out state when the session ends while open, and says why', async () => {
    await signedIn();
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('Bob Builder');

    await accountsItem.setValue({});
    await inboxItem.setValue(listing([], null, { kind: 'signed-out', message: 'You were signed out: Token was revoked.' }));

    expect(await screen.findByText('You were signed out: Token was revoked.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByText('Bob Builder')).toBeNull();
  });

  it('says what to do when the browser does not let it reach a server', async () => {
    await signedIn(listing([], null, { kind: 'no-permission', message: 'Your browser does not let Knock reach knock.test.' }));
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Your browser does not let Knock reach knock.test.');
    fireEvent.click(within(alert).getByRole('button', { name: 'Open options' }));
    expect(actions.openOptions).toHaveBeenCalled();
  });
});

describe('many requests at once', () => {
  const six: PendingSource[] = [
    { ...SOURCES[0]!, requests: [2, 4, 6].map((id) => accessRequest(id, `user${id}`, `User ${id}`, `2026-11-21T0${id}:00:00.000Z`)) },
    { ...SOURCES[1]!, requests: [3, 5, 7].map((id) => accessRequest(id, `user${id}`, `User ${id}`, `2026-11-21T0${id}:00:00.000Z`)) },
  ];
  const shownNames = () => screen.getAllByRole('listitem', { name: /\(@user\d\)/ }).map((li) => li.getAttribute('aria-label'));

  it('filters by group, project or requester, and sorts', async () => {
    await signedIn(listing(six));
    render(<PopupApp actions={fakeActions()} now={NOW} />);
    await screen.findByText('User 2');
    const filter = screen.getByRole('searchbox', { name: 'Filter by group, project or requester' });
    fireEvent.input(filter, { target: { value: 'WEBSITE' } });
    expect(shownNames()).toEqual(['User 3 (@user3)', 'User 5 (@user5)', 'User 7 (@user7)']);
    fireEvent.input(filter, { target: { value: 'user4' } });
    expect(shownNames()).toEqual(['User 4 (@user4)']);
    fireEvent.input(filter, { target: { value: 'nobody' } });
    expect(screen.getByText('No request matches “nobody”.')).toBeTruthy();
    fireEvent.input(filter, { target: { value: '' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Sort requests' }), { target: { value: 'newest' } });
    // Newest first: the project's (its newest is 07:00) before the group's, each newest first.
    expect(shownNames()).toEqual(['User 7 (@user7)', 'User 5 (@user5)', 'User 3 (@user3)', 'User 6 (@user6)', 'User 4 (@user4)', 'User 2 (@user2)']);
  });

  it('approves every shown request at one level in one action, and says so once', async () => {
    await signedIn(listing(six));
    const actions = fakeActions();
    render(<PopupApp actions={actions} now={NOW} />);
    await screen.findByText('User 2');
    fireEvent.click(screen.getByRole('button', { name: 'Approve selected' }));
    expect(screen.getByRole('alert').textContent).toBe('Select one or more requests first.');
    expect(actions.approve).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole('checkbox', { name: 'Select all shown' }));
    // A project Maintainer may not make Owners: the level offered is what every selected row allows.
    const level = screen.getByRole('combobox', { name: 'Access level for the selected requests' });
    expect([...level.querySelectorAll('option')].map((o) => o.textContent)).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer']);
    fireEvent.change(level, { target: { value: '20' } });
    fireEvent.click(screen.getByRole('button', { name: 'Approve selected' }));

    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Approved as Reporter: 6 requests.'));
    expect(vi.mocked(actions.approve).mock.calls.map(([r]) => [r.sourceId, r.userId, r.accessLevel])).toEqual([
      [10, 2, 20],
      [10, 4, 20],
      [10, 6, 20],
      [20, 3, 20],
      [20, 5, 20],
      [20, 7, 20],
    ]);
    expect(screen.queryByRole('listitem', { name: /\(@user\d\)/ })).toBeNull();
  });

  it('denies the selected requests after asking, and keeps a refused one with its reason', async () => {
    await signedIn(listing(six));
    const refusing = vi.fn(async (target: RequestTarget) => {
      if (target.userId === 5) throw new Error('403 Forbidden');
      await backgroundRemoves(target);
    });
    const actions = fakeActions({ deny: refusing });
    render(<PopupApp actions={actions} now={NOW} />);
    await screen.findByText('User 2');
    for (const u of ['user3', 'user5']) fireEvent.click(screen.getByRole('checkbox', { name: `Select @${u}'s request` }));
    fireEvent.click(screen.getByRole('button', { name: 'Deny selected' }));
    expect(screen.getByText('Deny 2 requests?')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(refusing).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Deny selected' }));
    fireEvent.click(within(screen.getByRole('group', { name: 'Selected requests' })).getByRole('button', { name: 'Deny' }));

    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Denied 1 request. 1 request could not be answered: see its row.'));
    expect(screen.queryByText('User 3')).toBeNull();
    expect(rowOf('user5').textContent).toContain('Could not deny @user5: 403 Forbidden');
  });
});
