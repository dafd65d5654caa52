// One visual language: the console (worker/pages/style.ts), the popup and the options page
// (extension/components/knock.css) take their colours, spacing and buttons from one set of tokens
// (shared/tokens.ts), readable in light and dark mode: every text colour at least WCAG 2.x AA's
// 4.5:1 against the page and a card, and a primary button's text against the button.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKENS_CSS } from '../../shared/tokens';
import { applyTokens } from '../../extension/components/tokens';
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
  light: tokensAfter(TOKENS_CSS, ':root'),
  dark: { ...tokensAfter(TOKENS_CSS, ':root'), ...tokensAfter(TOKENS_CSS, '@media (prefers-color-scheme: dark)') },
};

describe.each(Object.entries(modes))('the tokens in %s mode', (mode, t) => {
  it('keep every text colour at 4.5:1 or more on the page and on a card, and a primary button readable', () => {
    for (const surface of ['bg', 'card'])
      for (const text of ['fg', 'muted', 'accent', 'danger', 'ok']) expect(contrast(t[text]!, t[surface]!), `${mode} --${text} on --${surface}`).toBeGreaterThanOrEqual(4.5);
    expect(contrast(t['on-primary']!, t.primary!), `${mode} Approve's text`).toBeGreaterThanOrEqual(4.5);
  });
});

describe('one visual language', () => {
  it('is the tokens at the head of the console stylesheet and of every extension page, and the extension names no colour of its own', () => {
    expect(STYLESHEET.startsWith(TOKENS_CSS)).toBe(true);
    expect(css).not.toMatch(/#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(/i);
    applyTokens(document);
    applyTokens(document);
    const styles = document.head.querySelectorAll('style#knock-tokens');
    expect(styles).toHaveLength(1);
    expect(styles[0]!.textContent).toBe(TOKENS_CSS);
  });
});
