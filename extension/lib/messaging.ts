// The one channel between the extension's pages (popup, options) and the background.

import { defineExtensionMessaging } from '@webext-core/messaging';
import type { NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import type { Inbox } from './pending-requests';
import type { Account } from './stored-values';

export interface RequestTarget {
  kind: NamespaceKind;
  sourceId: number;
  userId: number;
}

export interface KnockProtocol {
  signIn(): Account;
  signOut(): void;
  refreshInbox(): Inbox;
  approve(request: RequestTarget & { accessLevel: number }): void;
  deny(request: RequestTarget): void;
  requestAccess(target: { kind: NamespaceKind; path: string }): AccessRequest;
}

export const { sendMessage, onMessage } = defineExtensionMessaging<KnockProtocol>();
