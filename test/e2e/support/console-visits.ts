// The web console's journeys in Chromium: a fresh Knock with the demo data and an
// administrator, signing in as someone, and axe's check of each page on the way (no serious or
// critical violation), remembering which pages it checked.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchPlain } from './chromium';
import { seedDemo, type DemoUser } from './demo';
import { callApi, startKnock, type RunningServer } from './knock-server';

export class ConsoleVisits {
  /** Every page axe checked, by its path. */
  readonly checked: string[] = [];

  constructor(
    private readonly browser: Browser,
    private readonly url: string,
  ) {}

  /** No serious or critical accessibility violation on the page as it is now. */
  async expectAccessible(page: Page): Promise<void> {
    const results = await new AxeBuilder({ page }).analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`)).toEqual([]);
    this.checked.push(new URL(page.url()).pathname);
  }

  /** A new browser window signed in as `who`, from the server's front page (the sign-in page, checked once). */
  async signIn(who: { username: string; password: string }): Promise<Page> {
    const context = await this.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(this.url);
    await page.waitForURL(/\/users\/sign_in/);
    if (this.checked.length === 0) await this.expectAccessible(page);
    await page.getByLabel('Username').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${this.url}/`);
    return page;
  }

  report(): string {
    return `axe checked ${this.checked.length} pages: ${this.checked.join(', ')}`;
  }
}

/** What a console journey runs against. */
export interface ConsoleWorld {
  server: RunningServer;
  demo: Record<'alice' | 'bob' | 'carol', DemoUser>;
  visits: ConsoleVisits;
  /** Prints the pages axe checked, closes Chromium, stops the server and removes its state. */
  close(): Promise<void>;
}

/** A fresh Knock (state in a temporary directory) with `npm start`'s demo data and the administrator `admin`, and Chromium. */
export async function openConsoleWorld(admin: { username: string; password: string; name: string }): Promise<ConsoleWorld> {
  const tmp = mkdtempSync(join(tmpdir(), 'knock-console-'));
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    server = await startKnock(join(tmp, 'state'));
    const demo = await seedDemo(server);
    await callApi(server, server.adminToken, 'POST', '/users', 201, { ...admin, email: `${admin.username}@example.test`, admin: true });
    browser = await launchPlain();
    const visits = new ConsoleVisits(browser, server.url);
    return {
      server,
      demo,
      visits,
      close: async () => {
        console.log(visits.report());
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Opens a console world before the file's tests and closes it after them; its parts are read
 * through the answer (`world.server`, `world.demo`, `world.visits`) once the tests run.
 */
export function useConsoleWorld(admin: { username: string; password: string; name: string }): Omit<ConsoleWorld, 'close'> {
  let opened: ConsoleWorld | undefined;
  beforeAll(async () => {
    opened = await openConsoleWorld(admin);
  });
  afterAll(() => opened?.close());
  const get = (): ConsoleWorld => {
    if (!opened) throw new Error('the console world opens in beforeAll');
    return opened;
  };
  return {
    get server() {
      return get().server;
    },
    get demo() {
      return get().demo;
    },
    get visits() {
      return get().visits;
    },
  };
}
