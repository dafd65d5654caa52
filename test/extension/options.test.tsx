import { fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { OptionsApp } from '../../extension/components/OptionsApp';
import type { OptionsActions } from '../../extension/components/popup-actions';
import { accountsItem, inboxItem, serversItem, settingsItem, type Account } from '../../extension/lib/stored-values';

const REDIRECT_URI = 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/';
const KNOCK = 'https://knock.example.com';
const LOCAL = 'http://127.0.0.1:8787';

const alice = (serverUrl: string, via: Account['via'] = 'oauth'): Account => ({
  serverUrl,
  userId: 1,
  username: 'alice',
  name: 'Alice',
  via,
  signedInAt: 0,
});

/** Commands as the background carries them out, on storage; the browser allows every host unless told. */
function fakeActions(overrides: Partial<OptionsActions> = {}): OptionsActions {
  return {
    addServer: vi.fn(async (serverUrl: string) => {
      const servers = await serversItem.getValue();
      const alreadyListed = servers.includes(serverUrl);
      if (!alreadyListed) await serversItem.setValue([...servers, serverUrl]);
      return { serverUrl, alreadyListed, reachable: true, problem: null };
    }),
    removeServer: vi.fn(async (serverUrl: string) => {
      await serversItem.setValue((await serversItem.getValue()).filter((listed) => listed !== serverUrl));
    }),
    signIn: vi.fn(async (serverUrl: string) => alice(serverUrl)),
    usePersonalAccessToken: vi.fn(async ({ serverUrl }: { serverUrl: string }) => alice(serverUrl, 'personal-access-token')),
    signOut: vi.fn(async () => accountsItem.setValue({})),
    requestHostPermission: vi.fn(async () => true),
    ...overrides,
  };
}

async function addServer(url: string) {
  fireEvent.input(await screen.findByRole('textbox', { name: 'Server URL' }), { target: { value: url } });
  fireEvent.click(screen.getByRole('button', { name: 'Add server' }));
}

const itemOf = (name: string) => screen.getByRole('listitem', { name });

describe('adding a server', () => {
  it('asks the browser for its host, with any port, then adds its origin', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await addServer(`${KNOCK}/some/page`);

    expect(await screen.findByText('Added knock.example.com. Sign in to it with its “Sign in” button above.')).toBeTruthy();
    expect(actions.requestHostPermission).toHaveBeenCalledWith('https://knock.example.com/*');
    expect(actions.addServer).toHaveBeenCalledWith(KNOCK);
    expect(within(itemOf('knock.example.com')).getByText('Not signed in.')).toBeTruthy();
  });

  it('asks about a local server without its port, which the permission granted at install covers', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await addServer('http://127.0.0.1:8787/');

    expect(await screen.findByText('Added 127.0.0.1:8787. Sign in to it with its “Sign in” button above.')).toBeTruthy();
    expect(actions.requestHostPermission).toHaveBeenCalledWith('http://127.0.0.1/*');
    expect(await serversItem.getValue()).toEqual([LOCAL]);
  });

  it('lists a server whose permission was refused, and says how to allow it later', async () => {
    const actions = fakeActions({
      requestHostPermission: vi.fn(async () => false),
      addServer: vi.fn(async (serverUrl: string) => {
        await serversItem.setValue([serverUrl]);
        await inboxItem.setValue({
          [serverUrl]: {
            fetchedAt: null,
            sources: [],
            problem: { kind: 'no-permission', message: 'Your browser does not let Knock reach knock.example.com.' },
            api: null,
            own: null,
            ownCheckedAt: null,
          },
        });
        return { serverUrl, alreadyListed: false, reachable: false, problem: null };
      }),
    });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await addServer(KNOCK);

    expect(await screen.findByText(/Your browser did not let Knock reach knock.example.com. Click “Allow access” next to it/)).toBeTruthy();
    const item = itemOf('knock.example.com');
    expect(within(item).getByRole('alert').textContent).toBe('Your browser does not let Knock reach knock.example.com.');

    vi.mocked(actions.requestHostPermission).mockResolvedValue(true);
    vi.mocked(actions.addServer).mockResolvedValue({ serverUrl: KNOCK, alreadyListed: true, reachable: true, problem: null });
    fireEvent.click(within(item).getByRole('button', { name: 'Allow access' }));

    expect(await within(item).findByText('Knock may reach knock.example.com now.')).toBeTruthy();
    expect(actions.requestHostPermission).toHaveBeenLastCalledWith('https://knock.example.com/*');
  });

  it('says where to sign in, and no more once signed in there', async () => {
    const actions = fakeActions({ signIn: vi.fn(async (serverUrl: string) => {
      const account = alice(serverUrl);
      await accountsItem.setValue({ [serverUrl]: account });
      return account;
    }) });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);
    await addServer(KNOCK);
    const added = 'Added knock.example.com. Sign in to it with its “Sign in” button above.';
    expect(await screen.findByText(added)).toBeTruthy();

    fireEvent.click(within(itemOf('knock.example.com')).getByRole('button', { name: 'Sign in to knock.example.com' }));

    expect(await within(itemOf('knock.example.com')).findByText('Signed in as Alice (@alice).')).toBeTruthy();
    expect(screen.queryByText(added)).toBeNull();
  });

  it('says when a server is listed already, instead of adding it again', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);
    await addServer(KNOCK);
    await screen.findByText(/^Added knock.example.com/);
    await addServer(`${KNOCK}/`);
    expect(await screen.findByText('knock.example.com is already in the list.')).toBeTruthy();
    expect(await serversItem.getValue()).toEqual([KNOCK]);
  });

  it('says when a server does not answer', async () => {
    const actions = fakeActions({
      addServer: vi.fn(async (serverUrl: string) => {
        await serversItem.setValue([serverUrl]);
        return { serverUrl, alreadyListed: false, reachable: true, problem: 'Knock could not reach knock.example.com.' };
      }),
    });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);
    await addServer(KNOCK);
    expect((await screen.findByRole('alert')).textContent).toBe(
      'knock.example.com is in the list, but it does not answer: Knock could not reach knock.example.com.',
    );
  });

  it('refuses an address that is not a web URL, before asking the browser anything', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await addServer('ftp://knock.example.com');

    expect((await screen.findByRole('alert')).textContent).toContain('must start with https://');
    expect(actions.requestHostPermission).not.toHaveBeenCalled();
    expect(actions.addServer).not.toHaveBeenCalled();
  });

  it('accepts plain http only for a server on this machine', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);

    await addServer('http://knock.example.com');

    expect((await screen.findByRole('alert')).textContent).toContain('http:// only for 127.0.0.1, localhost or [::1]');
    expect(await serversItem.getValue()).toEqual([]);
  });
});

describe('the list of servers', () => {
  it('says who is signed in where, and how', async () => {
    await serversItem.setValue([KNOCK, LOCAL, 'https://third.example']);
    await accountsItem.setValue({ [KNOCK]: alice(KNOCK), [LOCAL]: alice(LOCAL, 'personal-access-token') });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);

    expect(await within(await screen.findByRole('listitem', { name: 'knock.example.com' })).findByText('Signed in as Alice (@alice).')).toBeTruthy();
    expect(within(itemOf('127.0.0.1:8787')).getByText('Signed in as Alice (@alice) with a personal access token.')).toBeTruthy();
    expect(within(itemOf('third.example')).getByText('Not signed in.')).toBeTruthy();
  });

  it('signs in, signs out and removes each server by itself', async () => {
    await serversItem.setValue([KNOCK, LOCAL]);
    await accountsItem.setValue({ [LOCAL]: alice(LOCAL) });
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Sign in to knock.example.com' }));
    await waitFor(() => expect(actions.signIn).toHaveBeenCalledWith(KNOCK));
    fireEvent.click(screen.getByRole('button', { name: 'Sign out of 127.0.0.1:8787' }));
    await waitFor(() => expect(actions.signOut).toHaveBeenCalledWith(LOCAL));
    fireEvent.click(screen.getByRole('button', { name: 'Remove knock.example.com' }));

    await waitFor(() => expect(screen.queryByRole('listitem', { name: 'knock.example.com' })).toBeNull());
    expect(actions.removeServer).toHaveBeenCalledWith(KNOCK);
  });

  it('shows why signing in failed, next to the server', async () => {
    await serversItem.setValue([KNOCK]);
    const actions = fakeActions({ signIn: vi.fn(async () => Promise.reject(new Error('Sign-in cancelled: access was denied.'))) });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Sign in to knock.example.com' }));

    expect((await within(itemOf('knock.example.com')).findByRole('alert')).textContent).toBe('Sign-in cancelled: access was denied.');
  });

  it('takes a pasted personal access token instead of a sign-in, and shows the server’s refusal', async () => {
    await serversItem.setValue([KNOCK]);
    const usePersonalAccessToken = vi
      .fn<OptionsActions['usePersonalAccessToken']>()
      .mockRejectedValueOnce(new Error('knock.example.com refused the personal access token (401 Unauthorized).'))
      .mockResolvedValueOnce(alice(KNOCK, 'personal-access-token'));
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions({ usePersonalAccessToken })} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Use a personal access token for knock.example.com' }));
    const field = screen.getByLabelText('Personal access token for knock.example.com');
    fireEvent.input(field, { target: { value: 'glpat-wrong' } });
    fireEvent.submit(field.closest('form')!);

    expect((await screen.findByRole('alert')).textContent).toContain('refused the personal access token (401 Unauthorized)');
    fireEvent.input(field, { target: { value: 'glpat-right' } });
    fireEvent.submit(field.closest('form')!);

    await waitFor(() => expect(screen.queryByLabelText('Personal access token for knock.example.com')).toBeNull());
    expect(usePersonalAccessToken).toHaveBeenLastCalledWith({ serverUrl: KNOCK, token: 'glpat-right' });
  });
});

describe('the other settings', () => {
  it('keep the polling interval (5 minutes by default) and the notification choice', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);
    const interval = (await screen.findByRole('spinbutton', { name: 'Check every (minutes)' })) as HTMLInputElement;
    expect(interval.value).toBe('5');

    fireEvent.change(interval, { target: { value: '15' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Show a notification for each new request' }));

    await waitFor(async () => expect(await settingsItem.getValue()).toEqual({ pollMinutes: 15, notificationsEnabled: false }));
  });

  it('show the redirect URI the servers have to allow', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);

    expect((await screen.findByText(REDIRECT_URI)).tagName).toBe('CODE');
  });
});
