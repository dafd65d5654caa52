// The inbox, owned by the background: the only code that writes `inboxItem`. It brings the list
// up to date from the server (unless the server asked us to wait), removes a request at once when
// it is approved or denied and puts it back when the server refuses, and keeps the badge and the
// notifications in step. The popup only renders what is stored.

import { ApiError } from '../../shared/api-error';
import type { AccessRequest } from '../../shared/api-types';
import { createKnockClient } from '../../shared/client';
import { showPendingCount } from './badge';
import type { RequestTarget } from './messaging';
import { notifyNewRequests } from './notifier';
import { countRequests, fetchInbox, requestKey, sortSources, withoutRequest, type Inbox, type PendingSource } from './pending-requests';
import { inboxItem, retryNotBeforeItem, serverUrlItem, settingsItem } from './stored-values';
import { authorizedFetch, SignedOutError } from './tokens';

/** Used when a 429 comes without a usable Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 60;

/** The server asked us to slow down (RFC 6585 §4); nothing is sent before `retryAt`. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  constructor(readonly retryAt: number) {
    super(`Knock asked to slow down; trying again ${new Date(retryAt).toLocaleTimeString()}.`);
  }
}

export async function knockClient() {
  const serverUrl = await serverUrlItem.getValue();
  if (!serverUrl) throw new SignedOutError('Set your Knock server address in the options first.');
  return createKnockClient({ serverUrl, fetch: authorizedFetch });
}

/** Records a 429's Retry-After (RFC 9110 §10.2.3), so that polling waits for it. */
export async function rememberRateLimit(error: unknown, now: number = Date.now()): Promise<void> {
  if (error instanceof ApiError && error.status === 429) {
    await retryNotBeforeItem.setValue(now + (error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) * 1000);
  }
}

/** Inbox writes, one after another, each reading what the one before wrote. */
let writes: Promise<unknown> = Promise.resolve();

/** Changes the stored inbox (and the badge to match); `change` sees the latest stored value. */
function updateInbox(change: (inbox: Inbox | null) => Inbox | null): Promise<Inbox | null> {
  const write = writes.then(async () => {
    const next = change(await inboxItem.getValue());
    await inboxItem.setValue(next);
    await showPendingCount(countRequests(next));
    return next;
  });
  writes = write.catch(() => undefined);
  return write;
}

/** A request taken out of the inbox while the server decides on it, and where it was. */
interface Settling {
  target: RequestTarget;
  source: PendingSource | undefined;
  request: AccessRequest | undefined;
  index: number;
  outcome: Promise<void>;
}

const targetKey = (target: RequestTarget) => requestKey({ kind: target.kind, id: target.sourceId }, target.userId);

/** Decisions sent to the server and not answered yet: a refresh meanwhile must not bring them back. */
const settling = new Map<string, Settling>();

/** Decisions the server confirmed, and when: a refresh already under way may predate them. */
let confirmed: { target: RequestTarget; at: number }[] = [];
const DECISION_MEMORY_MS = 10 * 60_000;

const without = (inbox: Inbox, target: RequestTarget) => withoutRequest(inbox, target.kind, target.sourceId, target.userId);

/** The fetched inbox without requests being decided, or decided while it was being fetched. */
function withoutDecisions(inbox: Inbox, startedAt: number): Inbox {
  const targets = [
    ...[...settling.values()].map((entry) => entry.target),
    ...confirmed.filter((decision) => decision.at >= startedAt).map((decision) => decision.target),
  ];
  return targets.reduce(without, inbox);
}

/** Puts a request back where it was (its source too, if it had left with it). */
function withRequestBack(inbox: Inbox | null, { target, source, request, index }: Settling): Inbox | null {
  if (!inbox || !source || !request) return inbox;
  const present = inbox.sources.find((s) => s.kind === target.kind && s.id === target.sourceId);
  if (present?.requests.some((r) => r.id === request.id)) return inbox;
  if (!present) return { ...inbox, sources: sortSources([...inbox.sources, { ...source, requests: [request] }]) };
  const requests = [...present.requests];
  requests.splice(Math.min(index, requests.length), 0, request);
  return { ...inbox, sources: inbox.sources.map((s) => (s === present ? { ...s, requests } : s)) };
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
      await updateInbox((inbox) => {
        const source = inbox?.sources.find((s) => s.kind === target.kind && s.id === target.sourceId);
        entry.source = source;
        entry.index = source?.requests.findIndex((r) => r.id === target.userId) ?? -1;
        entry.request = source?.requests[entry.index];
        return inbox && without(inbox, target);
      });
      try {
        await send();
      } catch (error) {
        await rememberRateLimit(error);
        settling.delete(key);
        await updateInbox((inbox) => withRequestBack(inbox, entry));
        throw error;
      }
      const now = Date.now();
      confirmed = [...confirmed.filter((d) => now - d.at < DECISION_MEMORY_MS), { target, at: now }];
    } finally {
      settling.delete(key);
    }
  })();
  return entry.outcome;
}

let refreshing: Promise<Inbox> | null = null;

/** Brings the stored inbox up to date. One refresh at a time: callers meanwhile share it. */
export function refreshInbox(): Promise<Inbox> {
  refreshing ??= refresh().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

async function refresh(): Promise<Inbox> {
  const retryAt = await retryNotBeforeItem.getValue();
  if (Date.now() < retryAt) throw new RateLimitedError(retryAt);
  const startedAt = Date.now();
  let fetched: Inbox;
  try {
    fetched = await fetchInbox(await knockClient());
  } catch (error) {
    await rememberRateLimit(error);
    if (error instanceof SignedOutError) await showPendingCount(0);
    throw error;
  }
  let inbox = fetched;
  await updateInbox(() => (inbox = withoutDecisions(fetched, startedAt)));
  await notifyNewRequests(inbox, (await settingsItem.getValue()).notificationsEnabled);
  return inbox;
}
