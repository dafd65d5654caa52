// Prints the gzipped size of the JavaScript the popup loads and fails above the budget
// (issue 5: at most 30 kB). Run after `wxt build extension`.

import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 30_000;
const outDir = resolve(import.meta.dirname, '../.output', process.argv[2] ?? 'chrome-mv3');
const popupHtml = join(outDir, 'popup.html');
if (!existsSync(popupHtml)) {
  console.error(`No ${popupHtml}: build the extension first (npm run ext:build).`);
  process.exit(1);
}

const html = readFileSync(popupHtml, 'utf8');
const scripts = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+\.js)"/g)].map(
  (match) => match[1],
);
// Chunks imported by those chunks (static imports only; the popup has no lazy ones).
const seen = new Set();
const queue = [...scripts];
while (queue.length > 0) {
  const file = queue.shift().replace(/^\//, '');
  if (seen.has(file)) continue;
  seen.add(file);
  const code = readFileSync(join(outDir, file), 'utf8');
  for (const [, imported] of code.matchAll(/(?:import|from)\s*["']\.{0,2}\/?([^"']+\.js)["']/g)) {
    queue.push(join('chunks', imported.replace(/^chunks\//, '')));
  }
}

let total = 0;
for (const file of seen) {
  const gzipped = gzipSync(readFileSync(join(outDir, file)), { level: 9 }).length;
  total += gzipped;
  console.log(`  popup  ${file.padEnd(40)} ${(gzipped / 1000).toFixed(2)} kB gzipped`);
}
const verdict = total <= BUDGET_BYTES ? 'within' : 'OVER';
console.log(`Popup JavaScript: ${(total / 1000).toFixed(2)} kB gzipped (${verdict} the ${BUDGET_BYTES / 1000} kB budget)`);
if (total > BUDGET_BYTES) process.exit(1);
