// Every value the extension keeps, defined once (WXT storage items).

import type { AuthorizationServer } from 'oauth4webapi';
import { storage } from 'wxt/utils/storage';
import type { Inbox } from './pending-requests';

/** The Knock server's origin, e.g. `https://knock.example`; empty until set in the options. */
export const serverUrlItem = storage.defineItem<string>('local:serverUrl', { fallback: '' });

export interface AccessTokenRecord {
  token: string;
  /** ms since epoch. */
  expiresAt: number;
}

/** The server's authorization server metadata (RFC 8414), found at sign-in or first use. */
export const authorizationServerItem = storage.defineItem<{ serverUrl: string; metadata: AuthorizationServer } | null>(
  'session:authorizationServer',
  { fallback: null },
);

/** Lives only as long as the browser session (RFC 9700 §4.14: keep access tokens short-lived). */
export const accessTokenItem = storage.defineItem<AccessTokenRecord | null>('session:accessToken', {
  fallback: null,
});

/** Survives restarts so the user stays signed in; rotated on every refresh. */
export const refreshTokenItem = storage.defineItem<string | null>('local:refreshToken', { fallback: null });

/** Who is signed in, where. `null` means signed out. */
export interface Account {
  serverUrl: string;
  userId: number;
  username: string;
  name: string;
}
export const accountItem = storage.defineItem<Account | null>('local:account', { fallback: null });

export interface Settings {
  pollMinutes: number;
  notificationsEnabled: boolean;
}
/** Browsers do not repeat alarms more often than about this. */
export const MIN_POLL_MINUTES = 1;
export const DEFAULT_SETTINGS: Settings = { pollMinutes: 5, notificationsEnabled: true };
export const settingsItem = storage.defineItem<Settings>('local:settings', {
  fallback: DEFAULT_SETTINGS,
  version: 1,
});

/**
 * The pending requests: written only by the background (after each refresh, and at once when a
 * request is approved or denied, put back if the server refuses); the popup renders it.
 */
export const inboxItem = storage.defineItem<Inbox | null>('local:inbox', { fallback: null });

/** Requests a notification was already shown for (`requestKey` + `requested_at`). */
export const notifiedRequestsItem = storage.defineItem<string[]>('local:notifiedRequests', { fallback: [] });

/** After a 429, no request to the server before this time (ms since epoch). */
export const retryNotBeforeItem = storage.defineItem<number>('local:retryNotBefore', { fallback: 0 });
