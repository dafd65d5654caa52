// The popup's and the options page's colours (extension/components/knock.css): the console's
// (worker/pages/style.ts), and readable in light and dark mode: every text colour at least
// WCAG 2.x AA's 4.5:1 against the page, and the Approve button's text against its green.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STYLESHEET } from '../../worker/pages/style';

const css = readFileSync(resolve(import.meta.dirname, '../../extension/components/knock.css'), 'utf8');

/** The custom properties of the first rule block after `marker`. */
const tokensAfter = (source: string, marker: string): Record<string, string> => {
  const start = source.indexOf(marker);
  const block = source.slice(source.indexOf('{', start + (marker.startsWith('@media') ? source.indexOf('{', start) - start + 1 : 0)) + 1);
  const body = block.slice(0, block.indexOf('}'));
  return Object.fromEntries([...body.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!.toLowerCase()]));
};

/** WCAG 2.x relative luminance and contrast ratio. */
const luminance = (hex: string) => {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
};
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};

const modes = {
  light: tokensAfter(css, ':root'),
  dark: tokensAfter(css, '@media (prefers-color-scheme: dark)'),
};

describe.each(Object.entries(modes))('the extension in %s mode', (mode, t) => {
  it('keeps every text colour at 4.5:1 or more, Deny and Approve included', () => {
    for (const text of ['fg', 'muted', 'accent', 'danger', 'ok']) expect(contrast(t[text]!, t.bg!), `${mode} --${text} on --bg`).toBeGreaterThanOrEqual(4.5);
    expect(contrast(t['on-ok']!, t['ok-button']!), `${mode} Approve's text`).toBeGreaterThanOrEqual(4.5);
  });

  it("uses the console's accent and danger colours", () => {
    const console = mode === 'light' ? tokensAfter(STYLESHEET, ':root') : tokensAfter(STYLESHEET, '@media (prefers-color-scheme: dark)');
    expect({ accent: t.accent, danger: t.danger, fg: t.fg, muted: t.muted, ok: t.ok }).toEqual({ accent: console.accent, danger: console.danger, fg: console.fg, muted: console.muted, ok: console.ok });
  });
});
