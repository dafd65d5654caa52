// The toolbar badge: how many requests are waiting, on every server; its tooltip names the servers
// that could not be asked.

import { browser } from 'wxt/browser';
import { countRequests } from './pending-requests';
import { serverName } from './server-url';
import type { ServerInbox } from './stored-values';

const BADGE_COLOR = '#c2410c';

export async function showInboxes(inboxes: Record<string, ServerInbox>): Promise<void> {
  const count = countRequests(inboxes);
  const troubled = Object.entries(inboxes)
    .filter(([, inbox]) => inbox.problem)
    .map(([serverUrl]) => serverName(serverUrl));
  const waiting = count === 1 ? '1 access request waiting' : `${count > 0 ? count : 'No'} access requests waiting`;
  await browser.action.setBadgeBackgroundColor({ color: BADGE_COLOR });
  await browser.action.setBadgeText({ text: count > 0 ? String(count) : '' });
  await browser.action.setTitle({
    title: troubled.length > 0 ? `Knock: ${waiting}. Not up to date: ${troubled.join(', ')}.` : `Knock: ${waiting}.`,
  });
}
