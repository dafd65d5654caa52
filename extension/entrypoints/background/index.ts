import { browser } from 'wxt/browser';
import { defineBackground } from 'wxt/utils/define-background';
import { backgroundCommands } from '../../lib/background';
import { showPendingCount } from '../../lib/badge';
import { handleCommands } from '../../lib/messaging';
import { onPollAlarm, schedulePolling } from '../../lib/polling';
import { accountItem, settingsItem } from '../../lib/stored-values';

export default defineBackground(() => {
  handleCommands(backgroundCommands);

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
