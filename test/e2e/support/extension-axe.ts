// axe-core's check of an extension page (the popup, the options page) driven through
// puppeteer-core, in Chromium and Firefox alike: no serious or critical violation, on a wide
// screen and on a phone's (390 px), where nothing may be wider than the screen either. The
// source is evaluated over the driver's protocol, which the page's CSP (`script-src 'self'`) does
// not govern.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

export async function expectAccessibleExtensionPage(page: Page): Promise<void> {
  const size = page.viewport();
  try {
    for (const width of [1280, 390]) {
      await page.setViewport({ width, height: 900 });
      await page.evaluate(AXE_SOURCE);
      const violations = (await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: { run(context: Document): Promise<{ violations: unknown[] }> } }).axe;
        return JSON.parse(JSON.stringify((await axe.run(document)).violations));
      })) as Violation[];
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${width} px: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`)).toEqual([]);
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(scrollWidth, `${page.url()} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    }
  } finally {
    if (size) await page.setViewport(size);
  }
}
