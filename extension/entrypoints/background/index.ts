import { browser } from 'wxt/browser';
import { defineBackground } from 'wxt/utils/define-background';
import { backgroundCommands } from '../../lib/background';
import { handleCommands } from '../../lib/messaging';
import { onPollAlarm, schedulePolling } from '../../lib/polling';
import { permissionsChanged } from '../../lib/servers';
import { accountsItem, settingsItem } from '../../lib/stored-values';

export default defineBackground(() => {
  handleCommands(backgroundCommands);

  browser.alarms.onAlarm.addListener((alarm) => void onPollAlarm(alarm));
  browser.notifications.onClicked.addListener((id) => void browser.notifications.clear(id));
  browser.permissions.onAdded.addListener(() => void permissionsChanged());
  browser.permissions.onRemoved.addListener(() => void permissionsChanged());
  accountsItem.watch(() => void schedulePolling());
  settingsItem.watch(() => void schedulePolling());
  browser.runtime.onInstalled.addListener(() => void schedulePolling());
  browser.runtime.onStartup.addListener(() => void schedulePolling());
});
