// The one channel between the extension's pages (popup, options) and the background
// (@webext-core/messaging). Pages send commands; what the background knows reaches them through
// storage (stored-values.ts), never through replies.

import { defineExtensionMessaging } from '@webext-core/messaging';
import type { NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import type { Account } from './stored-values';

export interface RequestTarget {
  kind: NamespaceKind;
  sourceId: number;
  userId: number;
}

export interface KnockProtocol {
  signIn(): Account;
  signOut(): void;
  /** Brings the stored inbox up to date; fails with the reason when it could not. */
  refreshInbox(): void;
  /** The request leaves the stored inbox at once, and comes back if the server refuses. */
  approve(request: RequestTarget & { accessLevel: number }): void;
  deny(request: RequestTarget): void;
  requestAccess(target: { kind: NamespaceKind; path: string }): AccessRequest;
}

/** Each command as a function: sent by a page, carried out by the background (its reply or its error). */
export type Commands = {
  [K in keyof KnockProtocol]: (...args: Parameters<KnockProtocol[K]>) => Promise<ReturnType<KnockProtocol[K]>>;
};

export const { sendMessage, onMessage } = defineExtensionMessaging<KnockProtocol>();

/** The commands, sent to the background. */
export const commands: Commands = {
  signIn: () => sendMessage('signIn'),
  signOut: () => sendMessage('signOut'),
  refreshInbox: () => sendMessage('refreshInbox'),
  approve: (request) => sendMessage('approve', request),
  deny: (request) => sendMessage('deny', request),
  requestAccess: (target) => sendMessage('requestAccess', target),
};

/** Carries out each command in this context (the background); returns a function that stops. */
export function handleCommands(handlers: Commands): () => void {
  const stops = [
    onMessage('signIn', () => handlers.signIn()),
    onMessage('signOut', () => handlers.signOut()),
    onMessage('refreshInbox', () => handlers.refreshInbox()),
    onMessage('approve', ({ data }) => handlers.approve(data)),
    onMessage('deny', ({ data }) => handlers.deny(data)),
    onMessage('requestAccess', ({ data }) => handlers.requestAccess(data)),
  ];
  return () => stops.forEach((stop) => stop());
}
