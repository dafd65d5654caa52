// The web console's journeys in Chromium: signing in as someone, and axe's check of each page
// on the way (no serious or critical violation), remembering which pages it checked.

import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';

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
