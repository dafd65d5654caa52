// One desktop notification per new access request, never two for the same request.

import { browser } from 'wxt/browser';
import { requestKey } from './pending-requests';
import { serverName } from './server-url';
import { notifiedRequestsItem, type ServerInbox } from './stored-values';

/**
 * Notifies about requests not seen before (when notifications are on) and remembers every
 * request now pending, so turning notifications on later does not replay old ones. A request
 * made again after being approved or denied has a new `requested_at` and counts as new. Keys
 * (`requestKey` + `requested_at`) start with the server's origin.
 */
export async function notifyNewRequests(inboxes: Record<string, ServerInbox>, enabled: boolean): Promise<void> {
  const alreadyNotified = new Set(await notifiedRequestsItem.getValue());
  // Servers without a list now (signed out for a moment) keep what was announced for them.
  const pending = [...alreadyNotified].filter((key) => !(key.slice(0, key.indexOf(' ')) in inboxes));
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
