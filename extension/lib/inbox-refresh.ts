// Bringing the pending requests up to date: ask the server (unless it asked us to wait), keep the
// result for the popup, update the badge, notify about new requests. One refresh at a time.

import { ApiError } from '../../shared/api-error';
import { createKnockClient } from '../../shared/client';
import { showPendingCount } from './badge';
import { notifyNewRequests } from './notifier';
import type { RequestTarget } from './messaging';
import { countRequests, fetchInbox, withoutRequest, type Inbox } from './pending-requests';
import { inboxItem, retryNotBeforeItem, serverUrlItem, settingsItem } from './stored-values';
import { authorizedFetch, SignedOutError } from './tokens';

/** Used when a 429 comes without a usable Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 60;

/** The server asked us to slow down (429); nothing is sent before `retryAt`. */
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

/** Records a 429's Retry-After, so that polling waits for it. */
export async function rememberRateLimit(error: unknown, now: number = Date.now()): Promise<void> {
  if (error instanceof ApiError && error.status === 429) {
    await retryNotBeforeItem.setValue(now + (error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) * 1000);
  }
}

/** Stores the inbox and updates the badge to match. */
export async function keepInbox(inbox: Inbox | null): Promise<void> {
  await inboxItem.setValue(inbox);
  await showPendingCount(countRequests(inbox));
}

/** Approvals and denials the server confirmed, and when: a refresh already under way may predate them. */
let decisions: { target: RequestTarget; confirmedAt: number }[] = [];
const DECISION_MEMORY_MS = 10 * 60_000;

/** Records that the server confirmed an approval or denial (so a slower refresh cannot undo it). */
export function noteDecision(target: RequestTarget, now: number = Date.now()): void {
  decisions = [...decisions.filter((d) => now - d.confirmedAt < DECISION_MEMORY_MS), { target, confirmedAt: now }];
}

/** The fetched inbox without requests decided while it was being fetched. */
function withoutDecisionsSince(inbox: Inbox, startedAt: number): Inbox {
  return decisions
    .filter((decision) => decision.confirmedAt >= startedAt)
    .reduce((result, { target }) => withoutRequest(result, target.kind, target.sourceId, target.userId), inbox);
}

let refreshing: Promise<Inbox> | null = null;

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
  let inbox: Inbox;
  try {
    inbox = withoutDecisionsSince(await fetchInbox(await knockClient()), startedAt);
  } catch (error) {
    await rememberRateLimit(error);
    if (error instanceof SignedOutError) await showPendingCount(0);
    throw error;
  }
  await keepInbox(inbox);
  await notifyNewRequests(inbox, (await settingsItem.getValue()).notificationsEnabled);
  return inbox;
}
