import { browser } from 'wxt/browser';
import { defineBackground } from 'wxt/utils/define-background';
import { showPendingCount } from '../../lib/badge';
import { refreshInbox } from '../../lib/inbox-refresh';
import { onMessage } from '../../lib/messaging';
import { onPollAlarm, schedulePolling } from '../../lib/polling';
import { approve, deny, requestAccess } from '../../lib/request-actions';
import { signIn } from '../../lib/sign-in';
import { accountItem, settingsItem } from '../../lib/stored-values';
import { signOut } from '../../lib/tokens';

export default defineBackground(() => {
  onMessage('signIn', async () => {
    const account = await signIn();
    void refreshInbox().catch(() => undefined);
    return account;
  });
  onMessage('signOut', () => signOut());
  onMessage('refreshInbox', () => refreshInbox());
  onMessage('approve', ({ data }) => approve(data));
  onMessage('deny', ({ data }) => deny(data));
  onMessage('requestAccess', ({ data }) => requestAccess(data));

  browser.alarms.onAlarm.addListener((alarm) => void onPollAlarm(alarm));
  browser.notifications.onClicked.addListener((id) => void browser.notifications.clear(id));
  accountItem.watch((account) => {
    void schedulePolling();
    if (!account) void showPendingCount(0);
  });
  settingsItem.watch(() => void schedulePolling());
  browser.runtime.onInstalled.addListener(() => void schedulePolling());
  browser.runtime.onStartup.addListener(() => void schedulePolling());
});
