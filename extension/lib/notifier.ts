// One desktop notification per new access request, one per approval or denial of the user's own
// requests, and one per manager's alert (break-glass, access ending soon); never two for the same
// one, across restarts.

import { browser } from 'wxt/browser';
import type { AccessAlert, OwnAccessRequest } from '../../shared/api-types';
import { accessLevelName } from '../../shared/access-levels';
import { endText, outcomeText, ownKind, ownRequestKey } from './own-requests';
import { requestKey } from './pending-requests';
import { serverName } from './server-url';
import { notifiedAlertsItem, notifiedOutcomesItem, notifiedRequestsItem, type Account, type ServerInbox } from './stored-values';

/** The server's origin a stored key starts with. */
const serverOf = (key: string) => key.slice(0, key.indexOf(' '));

/**
 * Notifies about requests not seen before (when notifications are on) and remembers every
 * request now pending, so turning notifications on later does not replay old ones. A request
 * made again after being approved or denied has a new `requested_at` and counts as new. Keys
 * (`requestKey` + `requested_at`) start with the server's origin.
 */
export async function notifyNewRequests(inboxes: Record<string, ServerInbox>, enabled: boolean): Promise<void> {
  const alreadyNotified = new Set(await notifiedRequestsItem.getValue());
  // Servers without a list now (signed out for a moment) keep what was announced for them.
  const pending = [...alreadyNotified].filter((key) => !(serverOf(key) in inboxes));
  for (const [serverUrl, inbox] of Object.entries(inboxes)) {
    for (const source of inbox.sources) {
      for (const request of source.requests) {
        const key = `${requestKey(serverUrl, source, request.id)}:${request.requested_at}`;
        pending.push(key);
        if (!enabled || alreadyNotified.has(key)) continue;
        await browser.notifications.create(key, {
          type: 'basic',
          iconUrl: browser.runtime.getURL('/icon/128.png'),
          title: `${request.name} (@${request.username}) asks for access`,
          message: `to ${source.kind} ${source.fullPath} on ${serverName(serverUrl)}`,
        });
      }
    }
  }
  await notifiedRequestsItem.setValue(pending);
}

/**
 * Notifies the requester once when a request of theirs is approved or denied: not for outcomes
 * decided before they signed in there, not again after a restart or another poll (the keys are
 * stored), and not when notifications are off (the outcome still counts as told). Keys of outcomes
 * no longer listed are dropped; a server that did not say keeps its keys.
 */
export async function notifyOutcomes(inboxes: Record<string, ServerInbox>, accounts: Record<string, Account>, enabled: boolean, now = Date.now()): Promise<void> {
  const told = new Set(await notifiedOutcomesItem.getValue());
  const kept = [...told].filter((key) => !inboxes[serverOf(key)]?.own);
  for (const [serverUrl, inbox] of Object.entries(inboxes)) {
    const signedInAt = accounts[serverUrl]?.signedInAt ?? Infinity;
    for (const request of inbox.own ?? []) {
      if (endsSoon(request, now)) {
        // As the server's `expiring` event: once per granted end, while it is near.
        const key = `${ownRequestKey(serverUrl, request)}:expiring:${request.expires_at}`;
        kept.push(key);
        if (enabled && !told.has(key)) {
          await browser.notifications.create(key, {
            type: 'basic',
            iconUrl: browser.runtime.getURL('/icon/128.png'),
            title: `Your access to ${request.source_full_path} ends soon`,
            message: `It ends ${endText(request.expires_at ?? '')}; ask to extend it in the Request access tab (${serverName(serverUrl)})`,
          });
        }
      }
      if (request.status !== 'approved' && request.status !== 'denied') continue;
      const key = `${ownRequestKey(serverUrl, request)}:${request.status}`;
      kept.push(key);
      const decidedAt = request.decided_at ? Date.parse(request.decided_at) : 0;
      if (!enabled || told.has(key) || decidedAt < signedInAt) continue;
      await browser.notifications.create(key, {
        type: 'basic',
        iconUrl: browser.runtime.getURL('/icon/128.png'),
        title: request.status === 'approved' ? `Access granted to ${request.source_full_path}` : `Access to ${request.source_full_path} denied`,
        message: `${outcomeText(request)}: your request for ${ownKind(request)} ${request.source_full_path} on ${serverName(serverUrl)}`,
      });
    }
  }
  await notifiedOutcomesItem.setValue(kept);
}

/** One alert, once: its server, what happened, where, to whom, and the end (or the time of a grant). */
const alertKey = (serverUrl: string, a: AccessAlert) =>
  `${serverUrl} alert:${a.action}:${a.source_type}:${a.source_id}:${a.user.id}:${a.action === 'break_glass' ? a.at : a.expires_at}`;

/**
 * Notifies a manager once of each alert (a break-glass grant where they are an Owner, someone's
 * access ending soon where they manage): not again after a restart or another poll (the keys are
 * stored while the server lists the alert), and not when notifications are off (it still counts as
 * told). A server that did not say keeps its keys.
 */
export async function notifyAlerts(inboxes: Record<string, ServerInbox>, enabled: boolean): Promise<void> {
  const told = new Set(await notifiedAlertsItem.getValue());
  const kept = [...told].filter((key) => !inboxes[serverOf(key)]?.alerts);
  for (const [serverUrl, inbox] of Object.entries(inboxes)) {
    for (const alert of inbox.alerts ?? []) {
      const key = alertKey(serverUrl, alert);
      kept.push(key);
      if (!enabled || told.has(key)) continue;
      const who = alert.user.username ? `@${alert.user.username}` : `User ${alert.user.id}`;
      const until = alert.expires_at ? ` until ${endText(alert.expires_at)}` : '';
      await browser.notifications.create(key, {
        type: 'basic',
        iconUrl: browser.runtime.getURL('/icon/128.png'),
        ...(alert.action === 'break_glass'
          ? { title: `Break-glass access to ${alert.source_full_path}`, message: `${who} took ${accessLevelName(alert.access_level)}${until}: ${alert.reason ?? 'no reason given'} (${serverName(serverUrl)})` }
          : { title: `${who}'s access to ${alert.source_full_path} ends soon`, message: `${accessLevelName(alert.access_level)}${until} (${serverName(serverUrl)})` }),
      });
    }
  }
  await notifiedAlertsItem.setValue(kept);
}

/**
 * Whether an approved membership's end is near: within a day of an end given as a date (00:00 UTC
 * that day), within an hour of one given as a date-time, as the server warns (its `expiring` event).
 */
function endsSoon(request: OwnAccessRequest, now: number): boolean {
  if (request.status !== 'approved' || !request.expires_at) return false;
  const timed = request.expires_at.length > 10;
  const end = Date.parse(timed ? request.expires_at : `${request.expires_at}T00:00:00Z`);
  return now < end && now >= end - (timed ? 3_600_000 : 86_400_000);
}
