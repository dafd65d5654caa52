// The extension popup's JavaScript, gzipped: the scripts popup.html loads (and preloads) plus the
// chunks they import statically, from the Chrome build in extension/.output/chrome-mv3.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from './paths.mjs';

const OUT = join(ROOT, 'extension', '.output', 'chrome-mv3');

export function buildExtension() {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'wxt', 'bin', 'wxt.mjs'), 'build', 'extension'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', CI: '1' },
  });
}

export function popupSize() {
  const html = join(OUT, 'popup.html');
  if (!existsSync(html)) return null;
  const entries = [...readFileSync(html, 'utf8').matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+\.js)"/g)].map((m) =>
    m[1].replace(/^\//, ''),
  );
  const seen = new Set();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(join(OUT, file), 'utf8');
    for (const [, spec] of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+\.js)["']/g)) {
      queue.push(posix.normalize(posix.join(posix.dirname(file), spec)));
    }
  }
  const files = [...seen].map((file) => ({ file, gzipped: gzipSync(readFileSync(join(OUT, file)), { level: 9 }).length }));
  return { files, bytes: files.reduce((n, f) => n + f.gzipped, 0) };
}
