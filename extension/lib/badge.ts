// The toolbar badge: how many requests are waiting.

import { browser } from 'wxt/browser';

const BADGE_COLOR = '#c2410c';

export async function showPendingCount(count: number): Promise<void> {
  await browser.action.setBadgeBackgroundColor({ color: BADGE_COLOR });
  await browser.action.setBadgeText({ text: count > 0 ? String(count) : '' });
}
