// axe-core's check (axe.ts) of an extension page (the popup, the options page) driven through
// puppeteer-core, in Chromium and Firefox alike.

import type { Page } from 'puppeteer-core';
import { expectNoSeriousViolations } from './axe';

export async function expectAccessibleExtensionPage(page: Page): Promise<void> {
  const size = page.viewport();
  try {
    await expectNoSeriousViolations({
      evaluate: (expression) => page.evaluate(expression),
      setWidth: (width) => page.setViewport({ width, height: 900 }),
      url: () => page.url(),
    });
  } finally {
    if (size) await page.setViewport(size);
  }
}
