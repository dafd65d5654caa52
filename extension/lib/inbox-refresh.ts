// Bringing the pending requests up to date: ask the server (unless it asked us to wait), keep the
// result for the popup, update the badge, notify about new requests. One refresh at a time.

import { ApiError } from '../../shared/api-error';
import { createKnockClient } from '../../shared/client';
import { showPendingCount } from './badge';
import { notifyNewRequests } from './notifier';
import { countRequests, fetchInbox, type Inbox } from './pending-requests';
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
  let inbox: Inbox;
  try {
    inbox = await fetchInbox(await knockClient());
  } catch (error) {
    await rememberRateLimit(error);
    if (error instanceof SignedOutError) await showPendingCount(0);
    throw error;
  }
  await keepInbox(inbox);
  await notifyNewRequests(inbox, (await settingsItem.getValue()).notificationsEnabled);
  return inbox;
}
