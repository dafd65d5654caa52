// The built extension in a real browser, driven through puppeteer-core: Debian's Chromium over the
// DevTools protocol, Debian's Firefox ESR over WebDriver BiDi. One small driver per browser; the
// journey (test/e2e/extension-journey.ts) is written once against it.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { expect, vi } from 'vitest';
import { CHROMIUM } from './chromium';
import { ROOT } from './knock-server';

export { CHROMIUM };
export const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

/** Pinned by the manifest `key` (extension/wxt.config.ts). */
const CHROMIUM_EXTENSION_ID = 'odhclnlgfnipbpcdeojbgcidnleblgjk';
/** The gecko id (extension/wxt.config.ts). */
const GECKO_ID = 'knock-extension@knock.dev';
/** Firefox gives each installation a random UUID for its origin; the pref below pins it. */
const FIREFOX_EXTENSION_UUID = '6b1d3c1e-7f0a-4c55-9d8e-4b2a5e0c9a11';

export interface ExtensionBrowser {
  readonly name: 'Chromium' | 'Firefox';
  /** The extension's popup or options page, open in a new tab and loaded. */
  openExtensionPage(page: 'popup' | 'options'): Promise<Page>;
  /** The next top-level window whose address starts with `prefix` (the browser's auth window). */
  waitForWindow(prefix: string): Promise<Page>;
  /** The toolbar button's badge and tooltip, asked of the extension's own API. */
  badge(): Promise<{ text: string; title: string }>;
  /** The host permissions the browser has granted the extension. */
  grantedOrigins(): Promise<string[]>;
  /** Ends the browser and everything it started. */
  close(): Promise<void>;
}

/** `wxt build` for one browser (a child process: the test's servers start meanwhile); answers the unpacked build's folder. */
export async function buildExtension(target: 'chrome' | 'firefox'): Promise<string> {
  await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'wxt'), ['build', 'extension', '-b', target], { cwd: ROOT });
  return join(ROOT, 'extension', '.output', `${target}-mv3`);
}

export async function launchChromium(): Promise<ExtensionBrowser> {
  const dir = await buildExtension('chrome');
  const browser = await puppeteer.launch({
    browser: 'chrome',
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    enableExtensions: [dir],
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  return driver(browser, 'Chromium', `chrome-extension://${CHROMIUM_EXTENSION_ID}`, async (page, url) => {
    await page.goto(url);
  });
}

export async function launchFirefox(): Promise<ExtensionBrowser> {
  const dir = await buildExtension('firefox');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    // Lets WebDriver BiDi open and script the extension's own (privileged) pages.
    args: ['--remote-allow-system-access'],
    extraPrefsFirefox: { 'extensions.webextensions.uuids': JSON.stringify({ [GECKO_ID]: FIREFOX_EXTENSION_UUID }) },
  });
  try {
    await browser.installExtension(dir); // temporary, as about:debugging does
  } catch (error) {
    await browser.close();
    throw error;
  }
  return driver(browser, 'Firefox', `moz-extension://${FIREFOX_EXTENSION_UUID}`, async (page, url) => {
    // BiDi reports no load event for extension pages (Bugzilla 1755014): wait for the page itself.
    // Asking while the tab is still leaving about:blank may fail; that is asked again.
    void page.goto(url).catch(() => undefined);
    const loaded = () => page.evaluate(() => `${location.href} ${document.readyState}`).catch(() => 'navigating');
    await vi.waitFor(async () => expect(await loaded()).toBe(`${url} complete`), { timeout: 30_000, interval: 50 });
  });
}

/** The few calls of the WebExtension API the test makes (`browser` in Firefox, `chrome` in Chromium). */
interface WebExtensionApi {
  action: { getBadgeText(details: object): Promise<string>; getTitle(details: object): Promise<string> };
  permissions: { getAll(): Promise<{ origins?: string[] }> };
}
type ExtensionGlobals = { browser?: WebExtensionApi; chrome?: WebExtensionApi };

function driver(
  browser: Browser,
  name: ExtensionBrowser['name'],
  origin: string,
  navigate: (page: Page, url: string) => Promise<void>,
): ExtensionBrowser {
  let probePage: Promise<Page> | undefined;
  /** One extension page kept open, for the test to ask the extension's own API. */
  const probe = () => (probePage ??= openExtensionPage('options'));
  const openExtensionPage = async (which: 'popup' | 'options') => {
    const page = await browser.newPage();
    await navigate(page, `${origin}/${which}.html`);
    return page;
  };
  return {
    name,
    openExtensionPage,
    async waitForWindow(prefix) {
      const target = await browser.waitForTarget((candidate) => candidate.url().startsWith(prefix), { timeout: 30_000 });
      return target.asPage();
    },
    async badge() {
      return (await probe()).evaluate(async () => {
        const { browser: firefox, chrome } = globalThis as ExtensionGlobals;
        const api = firefox ?? chrome;
        if (!api) throw new Error('not an extension page');
        const { action } = api;
        return { text: await action.getBadgeText({}), title: await action.getTitle({}) };
      });
    },
    async grantedOrigins() {
      return (await probe()).evaluate(async () => {
        const { browser: firefox, chrome } = globalThis as ExtensionGlobals;
        const api = firefox ?? chrome;
        if (!api) throw new Error('not an extension page');
        return (await api.permissions.getAll()).origins ?? [];
      });
    },
    async close() {
      try {
        await browser.close();
      } catch {
        browser.process()?.kill('SIGKILL');
      }
    },
  };
}

/** Waits (up to 30 s) until the text appears in the page, or in the element `within` selects. */
export async function waitForText(page: Page, text: string, within = 'body'): Promise<void> {
  await page.waitForFunction(
    (selector, expected) => (document.querySelector(selector) as HTMLElement | null)?.innerText.includes(expected) ?? false,
    { timeout: 30_000, polling: 100 },
    within,
    text,
  );
}
