// axe-core's check of a page as it is now, for both drivers (playwright-core's console journeys,
// puppeteer-core's extension pages): no serious or critical violation, on a wide screen and on a
// phone's (390 px), where nothing may be wider than the screen either.
//
// axe-core's own source is evaluated in the page once (over the driver's protocol, which the page's
// CSP does not govern) and `axe.run` asked at each width. @axe-core/playwright's `analyze()` did
// the same work at about three times the cost: it evaluates the source again on every call, and
// finishes each run in a new blank page of its own (`axe.finishRun`, for cross-origin frames;
// Knock's pages have none and may not be framed).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/** What the check needs of a page, whichever driver opened it. */
export interface AxePage {
  /** Evaluates a JavaScript expression in the page, awaiting the promise it gives. */
  evaluate(expression: string): Promise<unknown>;
  setWidth(width: number): Promise<void>;
  url(): string;
}

export async function expectNoSeriousViolations(page: AxePage): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setWidth(width);
    if ((await page.evaluate('typeof window.axe')) !== 'object') await page.evaluate(AXE_SOURCE);
    const violations = JSON.parse(String(await page.evaluate('axe.run(document).then((results) => JSON.stringify(results.violations))'))) as Violation[];
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${width} px: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`)).toEqual([]);
    const scrollWidth = await page.evaluate('document.documentElement.scrollWidth');
    expect(scrollWidth, `${page.url()} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
  }
}
