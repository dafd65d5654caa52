// What the popup and options pages ask of the background. Pages get it as a prop, so tests can
// pass their own.

import type { NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import type { RequestTarget } from '../lib/messaging';
import type { Inbox } from '../lib/pending-requests';

export interface PopupActions {
  refreshInbox(): Promise<Inbox>;
  approve(request: RequestTarget & { accessLevel: number }): Promise<void>;
  deny(request: RequestTarget): Promise<void>;
  requestAccess(target: { kind: NamespaceKind; path: string }): Promise<AccessRequest>;
  signIn(): Promise<unknown>;
  openOptions(): Promise<void> | void;
}

export interface OptionsActions {
  signIn(): Promise<unknown>;
  signOut(): Promise<void>;
  /** Asks the user to let the extension reach `pattern`; true when allowed. */
  requestHostPermission(pattern: string): Promise<boolean>;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
