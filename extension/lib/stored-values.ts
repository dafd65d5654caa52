// Every value the extension keeps, defined once (WXT storage items). The extension talks to
// several Knock servers: each value below is a list or a record keyed by the server's origin
// (`https://knock.example`, the id of a server everywhere in the extension). These shapes are the
// baseline: no release of the extension has stored any other (docs/deploy.md says how a later
// release changes one).

import type { AuthorizationServer } from 'oauth4webapi';
import type { AccessAlert, OwnAccessRequest } from '../../shared/api-types';
import { storage } from 'wxt/utils/storage';
import type { PendingSource } from './pending-requests';

/** A server's origin, e.g. `https://knock.example` or `http://127.0.0.1:8787`. */
export type ServerUrl = string;

/** The servers, in the order they were added. */
export const serversItem = storage.defineItem<ServerUrl[]>('local:servers', { fallback: [] });

/** Who is signed in on a server. A server without one is signed out. */
export interface Account {
  serverUrl: ServerUrl;
  userId: number;
  username: string;
  name: string;
  /** How the extension authenticates there: OAuth sign-in, or a personal access token pasted in the options. */
  via: 'oauth' | 'personal-access-token';
  /** When they signed in (ms since epoch): outcomes of their requests decided before are not announced. */
  signedInAt: number;
}
export const accountsItem = storage.defineItem<Record<ServerUrl, Account>>('local:accounts', { fallback: {} });

/**
 * What the extension signs its calls with, per server; survives restarts. An OAuth refresh token
 * (rotated on every refresh) or a personal access token (kept until signed out).
 */
export type Credential = { kind: 'oauth'; refreshToken: string } | { kind: 'personal-access-token'; token: string };
export const credentialsItem = storage.defineItem<Record<ServerUrl, Credential>>('local:credentials', { fallback: {} });

export interface AccessTokenRecord {
  token: string;
  /** ms since epoch. */
  expiresAt: number;
}

/** OAuth access tokens: only as long as the browser session (RFC 9700 §4.14: keep them short-lived). */
export const accessTokensItem = storage.defineItem<Record<ServerUrl, AccessTokenRecord>>('session:accessTokens', { fallback: {} });

/** Each server's authorization server metadata (RFC 8414), found at sign-in or first use. */
export const authorizationServersItem = storage.defineItem<Record<ServerUrl, AuthorizationServer>>('session:authorizationServers', { fallback: {} });

export interface Settings {
  pollMinutes: number;
  notificationsEnabled: boolean;
}
/** Browsers do not repeat alarms more often than about this. */
export const MIN_POLL_MINUTES = 1;
const DEFAULT_SETTINGS: Settings = { pollMinutes: 5, notificationsEnabled: true };
export const settingsItem = storage.defineItem<Settings>('local:settings', { fallback: DEFAULT_SETTINGS });

/** Why the last attempt to reach a server failed. */
export type ServerProblem =
  | { kind: 'unreachable' | 'failed'; message: string }
  | { kind: 'signed-out'; message: string }
  /** The browser does not let the extension reach the server: the options page can ask again. */
  | { kind: 'no-permission'; message: string }
  /** The server asked to slow down (RFC 6585 §4): nothing is sent before `retryAt` (ms since epoch). */
  | { kind: 'rate-limited'; message: string; retryAt: number };

/**
 * How the extension asks a server for its list. `inbox`: Knock's `GET /access_requests`, one
 * request per poll; `etag` names the version of the list stored with it (null before the first
 * answer), sent back as `If-None-Match`. `per-source`: the server does not offer it (a plain GitLab,
 * an older Knock answer 404), so each group and project is asked, as GitLab's API allows; it is
 * asked again after `probedAt` is a day old, or after the next sign-in.
 */
export type ServerApi = { kind: 'inbox'; etag: string | null } | { kind: 'per-source'; probedAt: number };

/** What one server last said: its pending requests, and whether the last attempt failed. */
export interface ServerInbox {
  /** When the list was last fetched (ms since epoch); null before the first time. */
  fetchedAt: number | null;
  /** Only sources with at least one request, ordered by path. */
  sources: PendingSource[];
  /** Why the last refresh (or decision) failed; null when it worked. */
  problem: ServerProblem | null;
  /** How the list was fetched; null until it was. */
  api: ServerApi | null;
  /** The signed-in user's own requests and their outcomes (`GET /user/access_requests`); null where the server does not say. */
  own: OwnAccessRequest[] | null;
  /** When `own` was last asked for (ms since epoch); null: at the next poll. */
  ownCheckedAt: number | null;
  /** The manager's alerts (`GET /user/access_alerts`), as last asked; absent where the server does not say. */
  alerts?: AccessAlert[];
  /** When `alerts` was last asked for (ms since epoch). */
  alertsCheckedAt?: number;
}

/**
 * The pending requests, per server: written only by the background (after each refresh, and at
 * once when a request is approved or denied, put back if the server refuses); the popup renders it.
 */
export const inboxItem = storage.defineItem<Record<ServerUrl, ServerInbox>>('local:inbox', { fallback: {} });

/** Requests a notification was already shown for (`requestKey` + `requested_at`). */
export const notifiedRequestsItem = storage.defineItem<string[]>('local:notifiedRequests', { fallback: [] });

/**
 * Outcomes of the user's own requests a notification was already shown (or deliberately not
 * shown) for: `<server> <kind>:<source id>:<requested_at>:<status>`. Kept in `storage.local`, so a
 * restart does not announce them again.
 */
export const notifiedOutcomesItem = storage.defineItem<string[]>('local:notifiedOutcomes', { fallback: [] });

/** Manager's alerts a notification was already shown for (`alertKey`), while the server still lists them. */
export const notifiedAlertsItem = storage.defineItem<string[]>('local:notifiedAlerts', { fallback: [] });
