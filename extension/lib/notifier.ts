// One desktop notification per new access request, never two for the same request.

import { browser } from 'wxt/browser';
import { requestKey, type Inbox } from './pending-requests';
import { notifiedRequestsItem } from './stored-values';

/**
 * Notifies about requests not seen before (when notifications are on) and remembers every
 * request now pending, so turning notifications on later does not replay old ones. A request
 * made again after being approved or denied has a new `requested_at` and counts as new.
 */
export async function notifyNewRequests(inbox: Inbox, enabled: boolean): Promise<void> {
  const alreadyNotified = new Set(await notifiedRequestsItem.getValue());
  const pending: string[] = [];
  for (const source of inbox.sources) {
    for (const request of source.requests) {
      const key = `${requestKey(source, request.id)}:${request.requested_at}`;
      pending.push(key);
      if (!enabled || alreadyNotified.has(key)) continue;
      await browser.notifications.create(key, {
        type: 'basic',
        iconUrl: browser.runtime.getURL('/icon/128.png'),
        title: `${request.name} (@${request.username}) asks for access`,
        message: `to ${source.kind} ${source.fullPath}`,
      });
    }
  }
  await notifiedRequestsItem.setValue(pending);
}
