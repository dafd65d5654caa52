// From version 1 (one server) to version 2 (several): each function turns one stored value of
// version 1 into its version 2 shape, keyed by the one server version 1 knew. From version 2 to 3
// (Knock's inbox API): each server's list learns how it was fetched and the user's own requests,
// and each account when it was signed in. WXT runs them (stored-values.ts, `migrations`) in
// order, the first time each value is used after the update, and writes the result with its new
// version in one storage write, so a second run finds nothing to do.

import type { AuthorizationServer } from 'oauth4webapi';
import { storage } from 'wxt/utils/storage';
import type { PendingSource } from './pending-requests';
import type { AccessTokenRecord, Account, Credential, ServerInbox, ServerUrl } from './stored-values';

/** Version 1's values, as they were stored. */
interface V1Account {
  serverUrl: string;
  userId: number;
  username: string;
  name: string;
}
interface V1Inbox {
  fetchedAt: number;
  sources: PendingSource[];
}
/** Version 2's values that version 3 changed. */
type V2Account = Omit<Account, 'signedInAt'>;
type V2Inbox = Omit<ServerInbox, 'api' | 'own'>;

/**
 * The server version 1 was set to. Read from the same key the server list migrates, so it may
 * already hold version 2's list: version 1's server is then its first (and only) entry.
 */
async function v1Server(): Promise<ServerUrl | undefined> {
  const stored = await storage.getItem<string | string[]>('local:serverUrl');
  const server = Array.isArray(stored) ? stored[0] : stored;
  return server || undefined;
}

/** `value`, keyed by version 1's server; nothing when there was none. */
async function keyedByV1Server<T>(value: T | null | undefined): Promise<Record<ServerUrl, T>> {
  const server = await v1Server();
  return server && value != null ? { [server]: value } : {};
}

export const serversFromV1 = (serverUrl: string | null): ServerUrl[] => (serverUrl ? [serverUrl] : []);

/** Version 1 signed in through OAuth only. */
export const accountsFromV1 = (account: V1Account | null): Record<ServerUrl, V2Account> =>
  account ? { [account.serverUrl]: { ...account, via: 'oauth' } } : {};

/** Outcomes decided before the update are not announced: the account counts as signed in since then. */
export const accountsFromV2 = (accounts: Record<ServerUrl, V2Account> | null, now: number = Date.now()): Record<ServerUrl, Account> =>
  mapValues(accounts, (account) => ({ ...account, signedInAt: now }));

export const credentialsFromV1 = (refreshToken: string | null): Promise<Record<ServerUrl, Credential>> =>
  keyedByV1Server<Credential>(refreshToken ? { kind: 'oauth', refreshToken } : null);

export const accessTokensFromV1 = (record: AccessTokenRecord | null): Promise<Record<ServerUrl, AccessTokenRecord>> =>
  keyedByV1Server(record);

export const authorizationServersFromV1 = (
  kept: { serverUrl: string; metadata: AuthorizationServer } | null,
): Record<ServerUrl, AuthorizationServer> => (kept ? { [kept.serverUrl]: kept.metadata } : {});

export const inboxFromV1 = (inbox: V1Inbox | null): Promise<Record<ServerUrl, V2Inbox>> =>
  keyedByV1Server<V2Inbox>(inbox && { fetchedAt: inbox.fetchedAt, sources: inbox.sources, problem: null });

/** The next poll finds out which API the server offers (and the user's own requests, if it says). */
export const inboxFromV2 = (inboxes: Record<ServerUrl, V2Inbox> | null): Record<ServerUrl, ServerInbox> =>
  mapValues(inboxes, (inbox) => ({ ...inbox, api: null, own: null }));

function mapValues<A, B>(record: Record<ServerUrl, A> | null, map: (value: A) => B): Record<ServerUrl, B> {
  return Object.fromEntries(Object.entries(record ?? {}).map(([serverUrl, value]) => [serverUrl, map(value)]));
}

/** Version 1's keys (`group:10:2:<requested_at>`) with the server in front, as `requestKey` makes them now. */
export async function notifiedFromV1(keys: string[] | null): Promise<string[]> {
  const server = await v1Server();
  return server && keys ? keys.map((key) => `${server} ${key}`) : [];
}
