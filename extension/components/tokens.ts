import { TOKENS_CSS } from '../../shared/tokens';

/**
 * Puts the console's tokens and buttons (shared/tokens.ts) in an extension page, before its own
 * stylesheet (knock.css), so the popup, the options page and the console share one visual language.
 */
export function applyTokens(doc: Document): void {
  if (doc.getElementById('knock-tokens')) return;
  const style = doc.createElement('style');
  style.id = 'knock-tokens';
  style.textContent = TOKENS_CSS;
  doc.head.prepend(style);
}
