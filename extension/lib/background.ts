// What the background does for each command from the popup and the options page.

import { refreshInbox } from './inbox';
import type { Commands } from './messaging';
import { approve, deny, requestAccess, withdraw } from './request-actions';
import { addServer, removeServer } from './servers';
import { signIn, usePersonalAccessToken } from './sign-in';
import { signOut } from './tokens';

/** After a sign-in, the lists are fetched at once (their outcome is stored, not returned). */
const thenRefresh = () => void refreshInbox().catch(() => undefined);

export const backgroundCommands: Commands = {
  addServer,
  removeServer,
  async signIn(serverUrl) {
    const account = await signIn(serverUrl);
    thenRefresh();
    return account;
  },
  async usePersonalAccessToken({ serverUrl, token }) {
    const account = await usePersonalAccessToken(serverUrl, token);
    thenRefresh();
    return account;
  },
  signOut,
  refreshInbox,
  approve,
  deny,
  /** The new request shows under "Your requests" after the refresh that follows. */
  async requestAccess(target) {
    const request = await requestAccess(target);
    thenRefresh();
    return request;
  },
  withdraw,
};
