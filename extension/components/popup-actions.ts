// What the popup and options pages may ask of the background: the commands of KnockProtocol
// (lib/messaging.ts), plus what a page does by itself. Pages get them as a prop, so tests can pass
// their own.

import type { Commands } from '../lib/messaging';

export type PopupActions = Pick<Commands, 'refreshInbox' | 'approve' | 'deny' | 'requestAccess' | 'signIn' | 'withdraw'> & {
  openOptions(): Promise<void> | void;
};

export type OptionsActions = Pick<Commands, 'addServer' | 'removeServer' | 'signIn' | 'usePersonalAccessToken' | 'signOut'> & {
  /**
   * Asks the browser to let the extension reach `pattern`; true when allowed. Resolves at once,
   * without a prompt, when it already may. Must be called while a click is being handled.
   */
  requestHostPermission(pattern: string): Promise<boolean>;
};

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
