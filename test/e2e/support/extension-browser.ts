// Debian's Chromium with the built extension loaded, driven through playwright-core.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';
import { ROOT } from './knock-server';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const EXTENSION_DIR = join(ROOT, 'extension', '.output', 'chrome-mv3');
/** Pinned by the manifest `key` (extension/wxt.config.ts). */
export const EXTENSION_ID = 'odhclnlgfnipbpcdeojbgcidnleblgjk';

const HEADLESS_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function buildExtension(): void {
  execFileSync(join(ROOT, 'node_modules', '.bin', 'wxt'), ['build', 'extension'], { cwd: ROOT, stdio: 'pipe' });
}

export function launchWithExtension(userDataDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: false,
    viewport: { width: 900, height: 700 },
    args: [...HEADLESS_ARGS, `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`],
  });
}

/** A plain browser without the extension, for people other than the extension's user. */
export function launchPlain() {
  return chromium.launch({ executablePath: CHROMIUM, headless: false, args: HEADLESS_ARGS });
}

export async function backgroundWorker(context: BrowserContext): Promise<Worker> {
  const running = context.serviceWorkers().find((worker) => worker.url().startsWith(`chrome-extension://${EXTENSION_ID}/`));
  return running ?? context.waitForEvent('serviceworker', (worker) => worker.url().startsWith(`chrome-extension://${EXTENSION_ID}/`));
}

/** The toolbar badge's text, read from the extension's own background. */
export async function badgeText(context: BrowserContext): Promise<string> {
  const worker = await backgroundWorker(context);
  return worker.evaluate(() => (globalThis as unknown as { chrome: any }).chrome.action.getBadgeText({}));
}

export const extensionPage = (page: 'popup' | 'options') => `chrome-extension://${EXTENSION_ID}/${page}.html`;
