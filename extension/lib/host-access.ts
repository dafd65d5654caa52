// Whether the browser lets the extension reach a server (its host permission). Granted at install
// for 127.0.0.1 and localhost (the manifest's `host_permissions`), asked for by the options page
// for any other host, and removable by the user at any time in the browser's settings.

import { browser } from 'wxt/browser';
import { hostPattern } from './server-url';

export const canReach = (serverUrl: string): Promise<boolean> =>
  browser.permissions.contains({ origins: [hostPattern(serverUrl)] });
