// Polling with `alarms`: one repeating alarm while signed in anywhere, at the interval from the settings.

import { browser } from 'wxt/browser';
import { refreshInbox } from './inbox';
import { accountsItem, MIN_POLL_MINUTES, settingsItem } from './stored-values';

export const POLL_ALARM = 'poll-pending-requests';

/** Creates, moves or removes the polling alarm to match the settings; none while signed in nowhere. */
export async function schedulePolling(): Promise<void> {
  const [accounts, settings] = await Promise.all([accountsItem.getValue(), settingsItem.getValue()]);
  if (Object.keys(accounts).length === 0) {
    await browser.alarms.clear(POLL_ALARM);
    return;
  }
  const periodInMinutes = Math.max(MIN_POLL_MINUTES, settings.pollMinutes);
  const existing = await browser.alarms.get(POLL_ALARM);
  if (existing?.periodInMinutes === periodInMinutes) return;
  await browser.alarms.create(POLL_ALARM, { delayInMinutes: periodInMinutes, periodInMinutes });
}

/** What an alarm does: refresh every server's list (each records its own failure). */
export async function onPollAlarm(alarm: { name: string }): Promise<void> {
  if (alarm.name !== POLL_ALARM) return;
  await refreshInbox().catch(() => undefined);
}
