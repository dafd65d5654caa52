// What the background does for each command from the popup and the options page.

import { refreshInbox } from './inbox';
import type { Commands } from './messaging';
import { approve, deny, requestAccess } from './request-actions';
import { signIn } from './sign-in';
import { signOut } from './tokens';

export const backgroundCommands: Commands = {
  async signIn() {
    const account = await signIn();
    void refreshInbox().catch(() => undefined);
    return account;
  },
  signOut,
  async refreshInbox() {
    await refreshInbox();
  },
  approve,
  deny,
  requestAccess,
};
