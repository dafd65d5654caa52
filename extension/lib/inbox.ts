// The inbox, owned by the background: the only code that writes `inboxItem`. For each server it
// brings the list up to date (unless the server asked us to wait) in one conditional request to
// Knock's inbox, or source by source where the server does not offer it, records why it could not (the
// server is down, the session ended, the browser does not let us reach it), removes a request at
// once when it is approved or denied and puts it back when the server refuses, and keeps the badge
// and the notifications in step. One server's trouble never touches another's list. The popup
// only renders what is stored.

import type { NamespaceKind } from '../../shared/access-levels';
import { ApiError } from '../../shared/api-error';
import type { AccessAlert, AccessRequest, OwnAccessRequest } from '../../shared/api-types';
import { createKnockClient, type KnockClient } from '../../shared/client';
import { showInboxes } from './badge';
import { canReach } from './host-access';
import type { RequestTarget } from './messaging';
import { notifyAlerts, notifyNewRequests, notifyOutcomes } from './notifier';
import { ownKind } from './own-requests';
import { fetchPerSource, requestKey, sortSources, sourcesFromInbox, withoutRequest, type PendingSource } from './pending-requests';
import { serverName } from './server-url';
import {
  accountsItem,
  inboxItem,
  serversItem,
  settingsItem,
  type Account,
  type ServerApi,
  type ServerInbox,
  type ServerProblem,
  type ServerUrl,
} from './stored-values';
import { updateStored } from './stored-updates';
import { authorizedFetch, forgetSession, SignedOutError } from './tokens';

/** Used when a 429 comes without a usable Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 60;

const NOTHING_YET: ServerInbox = { fetchedAt: null, sources: [], problem: null, api: null, own: null, ownCheckedAt: null };

/** A server that does not offer Knock's inbox is asked again after this long (and after each sign-in). */
export const REPROBE_MS = 24 * 3600_000;

/**
 * The user's own requests are asked for at every poll only while one of them is pending (an
 * outcome can only follow a pending request); otherwise after sign-in, after asking for access
 * here, and hourly (a request made elsewhere, in the console or with curl, shows within the hour).
 * So a poll of an owner with nothing pending of their own is one request.
 */
export const OWN_RECHECK_MS = 3600_000;

/**
 * The manager's alerts (break-glass grants, access ending soon) are asked for after sign-in and
 * then every 10 minutes: an hour's warning is heard in time, and most polls stay one request.
 */
export const ALERTS_RECHECK_MS = 10 * 60_000;

const alertsDue = (stored: ServerInbox, account: Account, now: number) =>
  stored.alertsCheckedAt === undefined || stored.alertsCheckedAt < account.signedInAt || now - stored.alertsCheckedAt >= ALERTS_RECHECK_MS;

const ownDue = (stored: ServerInbox, account: Account, now: number) =>
  stored.ownCheckedAt === null ||
  stored.ownCheckedAt < account.signedInAt ||
  now - stored.ownCheckedAt >= OWN_RECHECK_MS ||
  (stored.own ?? []).some((r) => r.status === 'pending');

/** After asking for access here: the next poll asks for the user's own requests, so the new one shows. */
export const recheckOwnRequests = (serverUrl: ServerUrl): Promise<void> =>
  updateServerInbox(serverUrl, (inbox) => ({ ...inbox, ownCheckedAt: null }));

/** The server asked us to slow down (RFC 6585 §4); nothing is sent before `retryAt`. */
class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  constructor(
    serverUrl: ServerUrl,
    readonly retryAt: number,
  ) {
    super(`${serverName(serverUrl)} asked to slow down; trying again ${new Date(retryAt).toLocaleTimeString()}.`);
  }
}

/** The API client for a server, signed with its session; refused while it asked us to wait. */
export async function knockClient(serverUrl: ServerUrl) {
  const problem = (await inboxItem.getValue())[serverUrl]?.problem;
  if (problem?.kind === 'rate-limited' && Date.now() < problem.retryAt) throw new RateLimitedError(serverUrl, problem.retryAt);
  return createKnockClient({ serverUrl, fetch: authorizedFetch(serverUrl) });
}

/**
 * Changes one server's stored inbox (and the badge to match); `change` sees its latest value.
 * Only a server still in the list keeps an inbox, so a late answer cannot bring back a removed one.
 */
function updateServerInbox(serverUrl: ServerUrl, change: (inbox: ServerInbox) => ServerInbox | null): Promise<void> {
  return updateStored(inboxItem, async (all) => {
    const { [serverUrl]: current, ...others } = all;
    const listed = (await serversItem.getValue()).includes(serverUrl);
    const next = listed ? change(current ?? NOTHING_YET) : null;
    return next ? { ...others, [serverUrl]: next } : others;
  }).then(showInboxes);
}

/** Why a call to `serverUrl` failed, as the popup and the options page show it. */
function problemFrom(serverUrl: ServerUrl, error: unknown, now: number = Date.now()): ServerProblem {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SignedOutError) return { kind: 'signed-out', message };
  if (error instanceof RateLimitedError) return { kind: 'rate-limited', message, retryAt: error.retryAt };
  if (error instanceof ApiError && error.status === 429) {
    const retryAt = now + (error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) * 1000;
    return { kind: 'rate-limited', message: new RateLimitedError(serverUrl, retryAt).message, retryAt };
  }
  if (error instanceof ApiError && error.status === 0) return { kind: 'unreachable', message };
  return { kind: 'failed', message };
}

/**
 * Records that the server asked to wait (a 429's Retry-After, RFC 9110 §10.2.3), so that nothing
 * is sent to it before then; other failures of a single call are the caller's to show.
 */
export async function rememberRateLimit(serverUrl: ServerUrl, error: unknown): Promise<void> {
  if (!(error instanceof ApiError && error.status === 429)) return;
  const problem = problemFrom(serverUrl, error);
  await updateServerInbox(serverUrl, (inbox) => ({ ...inbox, problem }));
}

/** The user's own pending request for a source, withdrawn: their list says so until the next poll brings the server's word. */
export function recordWithdrawal(serverUrl: ServerUrl, kind: NamespaceKind, sourceId: number): Promise<void> {
  const decidedAt = new Date().toISOString();
  return updateServerInbox(serverUrl, (inbox) => ({
    ...inbox,
    own:
      inbox.own?.map((request) =>
        ownKind(request) === kind && request.source_id === sourceId && request.status === 'pending'
          ? { ...request, status: 'withdrawn' as const, decided_at: decidedAt }
          : request,
      ) ?? null,
  }));
}

/** A request taken out of the inbox while the server decides on it, and where it was. */
interface Settling {
  target: RequestTarget;
  source: PendingSource | undefined;
  request: AccessRequest | undefined;
  index: number;
  outcome: Promise<void>;
}

const targetKey = (target: RequestTarget) => requestKey(target.serverUrl, { kind: target.kind, id: target.sourceId }, target.userId);

/** Decisions sent to a server and not answered yet: a refresh meanwhile must not bring them back. */
const settling = new Map<string, Settling>();

/**
 * For each refresh under way, the decisions the server confirmed since it started: its answer may
 * predate them. Kept by the order things happened in, not by the clock, which reads the same for
 * many events in a millisecond and may be set back.
 */
const confirmedDuring = new Set<RequestTarget[]>();

const without = (sources: PendingSource[], target: RequestTarget) =>
  withoutRequest(sources, target.kind, target.sourceId, target.userId);

/** A server's fetched list without requests being decided, or confirmed while it was being fetched. */
function withoutDecisions(serverUrl: ServerUrl, sources: PendingSource[], confirmed: RequestTarget[]): PendingSource[] {
  const targets = [...[...settling.values()].map((entry) => entry.target), ...confirmed].filter((target) => target.serverUrl === serverUrl);
  return targets.reduce(without, sources);
}

/** Puts a request back where it was (its source too, if it had left with it). */
function withRequestBack(sources: PendingSource[], { target, source, request, index }: Settling): PendingSource[] {
  if (!source || !request) return sources;
  const present = sources.find((s) => s.kind === target.kind && s.id === target.sourceId);
  if (present?.requests.some((r) => r.id === request.id)) return sources;
  if (!present) return sortSources([...sources, { ...source, requests: [request] }]);
  const requests = [...present.requests];
  requests.splice(Math.min(index, requests.length), 0, request);
  return sources.map((s) => (s === present ? { ...s, requests } : s));
}

/**
 * Approves or denies through `send`: the request leaves the stored inbox at once, and comes back
 * if the server refuses (the error then reaches the caller). Asking again while the server has not
 * answered waits for the same answer.
 */
export function decide(target: RequestTarget, send: () => Promise<unknown>): Promise<void> {
  const key = targetKey(target);
  const pending = settling.get(key);
  if (pending) return pending.outcome;
  const entry: Settling = { target, source: undefined, request: undefined, index: 0, outcome: Promise.resolve() };
  settling.set(key, entry);
  entry.outcome = (async () => {
    try {
      await updateServerInbox(target.serverUrl, (inbox) => {
        const source = inbox.sources.find((s) => s.kind === target.kind && s.id === target.sourceId);
        entry.source = source;
        entry.index = source?.requests.findIndex((r) => r.id === target.userId) ?? -1;
        entry.request = source?.requests[entry.index];
        return { ...inbox, sources: without(inbox.sources, target) };
      });
      try {
        await send();
      } catch (error) {
        await rememberRateLimit(target.serverUrl, error);
        settling.delete(key);
        await updateServerInbox(target.serverUrl, (inbox) => ({ ...inbox, sources: withRequestBack(inbox.sources, entry) }));
        throw error;
      }
      for (const confirmed of confirmedDuring) confirmed.push(target);
    } finally {
      settling.delete(key);
    }
  })();
  return entry.outcome;
}

const refreshing = new Map<ServerUrl, Promise<ServerInbox | undefined>>();

/** Brings one server's stored inbox up to date. One refresh per server at a time: callers meanwhile share it. */
function refreshServer(serverUrl: ServerUrl): Promise<ServerInbox | undefined> {
  let refresh = refreshing.get(serverUrl);
  if (!refresh) {
    const confirmed: RequestTarget[] = [];
    confirmedDuring.add(confirmed);
    refresh = fetchServer(serverUrl, confirmed).finally(() => {
      refreshing.delete(serverUrl);
      confirmedDuring.delete(confirmed);
    });
    refreshing.set(serverUrl, refresh);
  }
  return refresh;
}

/**
 * Brings every signed-in server's list up to date, side by side; each records its own outcome.
 * Then announces the requests that are new, wherever they are.
 */
export async function refreshInbox(): Promise<void> {
  const [servers, accounts] = await Promise.all([serversItem.getValue(), accountsItem.getValue()]);
  await Promise.all(servers.filter((serverUrl) => accounts[serverUrl]).map(refreshServer));
  const notifying = notified.then(async () => {
    const [inboxes, { notificationsEnabled }] = await Promise.all([inboxItem.getValue(), settingsItem.getValue()]);
    await notifyNewRequests(inboxes, notificationsEnabled);
    await notifyOutcomes(inboxes, await accountsItem.getValue(), notificationsEnabled);
    await notifyAlerts(inboxes, notificationsEnabled);
  });
  notified = notifying.catch(() => undefined);
  await notifying;
}

/** Notifications are decided one refresh at a time, so two refreshes at once cannot both announce the same thing. */
let notified: Promise<void> = Promise.resolve();

/** What one poll of a server found: its list (null: unchanged since `api`'s ETag), how it was asked, the user's own requests. */
interface Fetched {
  sources: PendingSource[] | null;
  api: ServerApi;
  own: OwnAccessRequest[] | null;
  ownCheckedAt: number | null;
  alerts?: AccessAlert[];
  alertsCheckedAt?: number;
}

/** A server without Knock's inbox is asked for it again a day later, and after each sign-in. */
const probeDue = (api: { probedAt: number }, account: Account, now: number) =>
  api.probedAt < account.signedInAt || now - api.probedAt >= REPROBE_MS;

const isNotFound = (error: unknown) => error instanceof ApiError && error.status === 404;

/**
 * One poll: Knock's inbox with the stored ETag (a 304 leaves the list as it is) and, when due
 * (`ownDue`), the user's own requests beside it; where the server answers 404 (a plain GitLab, an
 * older Knock), every group's and project's list instead, as GitLab's API allows, remembered as
 * the server's way.
 */
async function poll(client: KnockClient, stored: ServerInbox, account: Account, now: number): Promise<Fetched> {
  const perSource = async (api: ServerApi): Promise<Fetched> => ({ sources: (await fetchPerSource(client)).sources, api, own: null, ownCheckedAt: null });
  if (stored.api?.kind === 'per-source' && !probeDue(stored.api, account, now)) return perSource(stored.api);
  const etag = stored.api?.kind === 'inbox' ? stored.api.etag : null;
  const askOwn = ownDue(stored, account, now);
  const askAlerts = alertsDue(stored, account, now);
  const [inbox, own, alerts] = await Promise.allSettled([
    client.inbox(etag),
    askOwn ? client.ownRequests() : Promise.resolve(stored.own),
    askAlerts ? client.accessAlerts() : Promise.resolve(stored.alerts),
  ]);
  if (inbox.status === 'rejected') {
    if (isNotFound(inbox.reason)) return perSource({ kind: 'per-source', probedAt: now });
    throw inbox.reason;
  }
  if (own.status === 'rejected' && !isNotFound(own.reason)) throw own.reason;
  if (alerts.status === 'rejected' && !isNotFound(alerts.reason)) throw alerts.reason;
  return {
    sources: inbox.value && sourcesFromInbox(inbox.value.items),
    api: { kind: 'inbox', etag: inbox.value ? inbox.value.etag : etag },
    own: own.status === 'fulfilled' ? own.value : null,
    ownCheckedAt: askOwn ? now : stored.ownCheckedAt,
    // An older Knock without alerts (404) is asked again at the next recheck.
    alerts: alerts.status === 'fulfilled' ? alerts.value : undefined,
    alertsCheckedAt: askAlerts ? now : stored.alertsCheckedAt,
  };
}

/**
 * The stored inbox of `serverUrl` after asking it, or after recording why that failed; `confirmed`
 * fills with the decisions confirmed meanwhile.
 */
async function fetchServer(serverUrl: ServerUrl, confirmed: RequestTarget[]): Promise<ServerInbox | undefined> {
  const startedAt = Date.now();
  let fetched: Fetched;
  try {
    if (!(await checkReach(serverUrl))) return (await inboxItem.getValue())[serverUrl];
    const account = (await accountsItem.getValue())[serverUrl];
    if (!account) return undefined;
    const stored = (await inboxItem.getValue())[serverUrl] ?? NOTHING_YET;
    fetched = await poll(await knockClient(serverUrl), stored, account, startedAt);
  } catch (error) {
    if (error instanceof SignedOutError) await forgetSession(serverUrl);
    const problem = problemFrom(serverUrl, error);
    await updateServerInbox(serverUrl, (inbox) =>
      problem.kind === 'signed-out' ? { ...NOTHING_YET, problem } : { ...inbox, problem },
    );
    return (await inboxItem.getValue())[serverUrl];
  }
  // A session ended meanwhile (signed out in the options) keeps no list.
  if (!(await accountsItem.getValue())[serverUrl]) return undefined;
  await updateServerInbox(serverUrl, (inbox) => ({
    fetchedAt: startedAt,
    sources: fetched.sources ? withoutDecisions(serverUrl, fetched.sources, confirmed) : inbox.sources,
    problem: null,
    api: fetched.api,
    own: fetched.own,
    ownCheckedAt: fetched.ownCheckedAt,
    alerts: fetched.alerts,
    alertsCheckedAt: fetched.alertsCheckedAt,
  }));
  return (await inboxItem.getValue())[serverUrl];
}

/**
 * Whether the browser lets the extension reach `serverUrl` now; records it as the server's
 * problem when not (what to do about it included), and forgets that problem once it may again.
 */
export async function checkReach(serverUrl: ServerUrl): Promise<boolean> {
  const allowed = await canReach(serverUrl);
  const problem: ServerProblem = {
    kind: 'no-permission',
    message: `Your browser does not let Knock reach ${serverName(serverUrl)}. Open Knock's options and click “Allow access”.`,
  };
  await updateServerInbox(serverUrl, (inbox) =>
    allowed ? (inbox.problem?.kind === 'no-permission' ? { ...inbox, problem: null } : inbox) : { ...inbox, problem },
  );
  return allowed;
}
