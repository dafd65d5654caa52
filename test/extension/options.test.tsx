import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it, vi } from 'vitest';
import { OptionsApp } from '../../extension/components/OptionsApp';
import type { OptionsActions } from '../../extension/components/popup-actions';
import { accountItem, serverUrlItem, settingsItem } from '../../extension/lib/stored-values';

const REDIRECT_URI = 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/';

function fakeActions(overrides: Partial<OptionsActions> = {}): OptionsActions {
  return {
    signIn: vi.fn(async () => ({ serverUrl: 'https://knock.example.com', userId: 1, username: 'alice', name: 'Alice' })),
    signOut: vi.fn(async () => {
      await accountItem.setValue(null);
    }),
    requestHostPermission: vi.fn(async () => true),
    ...overrides,
  };
}

async function saveServer(url: string) {
  fireEvent.input(await screen.findByRole('textbox', { name: 'Server URL' }), { target: { value: url } });
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));
}

describe('the options page', () => {
  it('saves the server’s origin once the user allows the extension to reach it', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await saveServer('https://knock.example.com/some/page');

    expect(await screen.findByText('Saved. Knock will talk to https://knock.example.com.')).toBeTruthy();
    expect(actions.requestHostPermission).toHaveBeenCalledWith('https://knock.example.com/*');
    expect(await serverUrlItem.getValue()).toBe('https://knock.example.com');
  });

  it('saves nothing when the permission is refused', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions({ requestHostPermission: async () => false })} />);

    await saveServer('https://knock.example.com');

    expect((await screen.findByRole('alert')).textContent).toContain('needs permission to reach https://knock.example.com');
    expect(await serverUrlItem.getValue()).toBe('');
  });

  it('refuses an address that is not a web URL', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await saveServer('ftp://knock.example.com');

    expect((await screen.findByRole('alert')).textContent).toContain('must start with https://');
    expect(actions.requestHostPermission).not.toHaveBeenCalled();
  });

  it('accepts plain http only for a server on this machine', async () => {
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    await saveServer('http://knock.example.com');
    expect((await screen.findByRole('alert')).textContent).toContain('http:// only for 127.0.0.1, localhost or [::1]');

    await saveServer('http://localhost:8787/');
    expect(await screen.findByText('Saved. Knock will talk to http://localhost:8787.')).toBeTruthy();
    expect(await serverUrlItem.getValue()).toBe('http://localhost:8787');
  });

  it('signs out before switching to another server', async () => {
    await serverUrlItem.setValue('https://old.example.com');
    await accountItem.setValue({ serverUrl: 'https://old.example.com', userId: 1, username: 'alice', name: 'Alice' });
    const actions = fakeActions();
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);
    expect(await screen.findByText('Signed in as Alice (@alice) on https://old.example.com.')).toBeTruthy();

    await saveServer('https://new.example.com');

    await waitFor(() => expect(actions.signOut).toHaveBeenCalled());
    expect(await screen.findByText('Not signed in to https://new.example.com.')).toBeTruthy();
  });

  it('signs in, and shows why when it fails', async () => {
    await serverUrlItem.setValue('https://knock.example.com');
    const actions = fakeActions({ signIn: vi.fn(async () => Promise.reject(new Error('Sign-in cancelled: access was denied.'))) });
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={actions} />);

    fireEvent.click(await screen.findByRole('button', { name: 'Sign in' }));

    expect((await screen.findByRole('alert')).textContent).toBe('Sign-in cancelled: access was denied.');
  });

  it('keeps the polling interval (5 minutes by default) and the notification choice', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);
    const interval = (await screen.findByRole('spinbutton', { name: 'Check every (minutes)' })) as HTMLInputElement;
    expect(interval.value).toBe('5');

    fireEvent.change(interval, { target: { value: '15' } });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Show a notification for each new request' }));

    await waitFor(async () => expect(await settingsItem.getValue()).toEqual({ pollMinutes: 15, notificationsEnabled: false }));
  });

  it('shows the redirect URI the server has to allow', async () => {
    render(<OptionsApp redirectUri={REDIRECT_URI} actions={fakeActions()} />);

    expect((await screen.findByText(REDIRECT_URI)).tagName).toBe('CODE');
  });
});
