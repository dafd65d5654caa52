// The one channel between the extension's pages (popup, options) and the background
// (@webext-core/messaging). Pages send commands; what the background knows reaches them through
// storage (stored-values.ts), never through replies.

import { defineExtensionMessaging } from '@webext-core/messaging';
import type { NamespaceKind } from '../../shared/access-levels';
import type { RuleApprovedAccessRequest, AccessRequest } from '../../shared/api-types';
import type { Account, ServerUrl } from './stored-values';
import type { AddedServer } from './servers';

/** One pending request: on which server, for which group or project, by whom. */
export interface RequestTarget {
  serverUrl: ServerUrl;
  kind: NamespaceKind;
  sourceId: number;
  userId: number;
}

export interface KnockProtocol {
  /**
   * Adds a server by its address (once), and says whether the browser lets the extension reach
   * it. The page asks the browser for that permission first: only a page can show the prompt.
   */
  addServer(address: string): AddedServer;
  /** Signs out of a server and forgets it. */
  removeServer(serverUrl: ServerUrl): void;
  signIn(serverUrl: ServerUrl): Account;
  /** Signs in with a personal access token instead of OAuth. */
  usePersonalAccessToken(input: { serverUrl: ServerUrl; token: string }): Account;
  signOut(serverUrl: ServerUrl): void;
  /** Brings every signed-in server's list up to date; each server's outcome is stored with its list. */
  refreshInbox(): void;
  /** The request leaves the stored inbox at once, and comes back if the server refuses. */
  /** Without `accessLevel`, what was asked (level and end). */
  approve(request: RequestTarget & { accessLevel?: number }): void;
  deny(request: RequestTarget): void;
  /** `hours`: how long the access should last (null or absent: no end). */
  requestAccess(target: { serverUrl: ServerUrl; kind: NamespaceKind; path: string; reason?: string; accessLevel?: number; hours?: number | null }): AccessRequest | RuleApprovedAccessRequest;
  /** Withdraws the user's own pending request; their list shows it withdrawn once the server agrees. */
  withdraw(target: { serverUrl: ServerUrl; kind: NamespaceKind; sourceId: number }): void;
}

/** Each command as a function: sent by a page, carried out by the background (its reply or its error). */
export type Commands = {
  [K in keyof KnockProtocol]: (...args: Parameters<KnockProtocol[K]>) => Promise<ReturnType<KnockProtocol[K]>>;
};

const { sendMessage, onMessage } = defineExtensionMessaging<KnockProtocol>();

/** The commands, sent to the background. */
export const commands: Commands = {
  addServer: (address) => sendMessage('addServer', address),
  removeServer: (serverUrl) => sendMessage('removeServer', serverUrl),
  signIn: (serverUrl) => sendMessage('signIn', serverUrl),
  usePersonalAccessToken: (input) => sendMessage('usePersonalAccessToken', input),
  signOut: (serverUrl) => sendMessage('signOut', serverUrl),
  refreshInbox: () => sendMessage('refreshInbox'),
  approve: (request) => sendMessage('approve', request),
  deny: (request) => sendMessage('deny', request),
  requestAccess: (target) => sendMessage('requestAccess', target),
  withdraw: (target) => sendMessage('withdraw', target),
};

/** Carries out each command in this context (the background); returns a function that stops. */
export function handleCommands(handlers: Commands): () => void {
  const stops = [
    onMessage('addServer', ({ data }) => handlers.addServer(data)),
    onMessage('removeServer', ({ data }) => handlers.removeServer(data)),
    onMessage('signIn', ({ data }) => handlers.signIn(data)),
    onMessage('usePersonalAccessToken', ({ data }) => handlers.usePersonalAccessToken(data)),
    onMessage('signOut', ({ data }) => handlers.signOut(data)),
    onMessage('refreshInbox', () => handlers.refreshInbox()),
    onMessage('approve', ({ data }) => handlers.approve(data)),
    onMessage('deny', ({ data }) => handlers.deny(data)),
    onMessage('requestAccess', ({ data }) => handlers.requestAccess(data)),
    onMessage('withdraw', ({ data }) => handlers.withdraw(data)),
  ];
  return () => stops.forEach((stop) => stop());
}
