// `npm run deploy:check`: builds the bundle `wrangler deploy` would upload, without uploading,
// so a Worker that would not deploy fails the build; prints the bundle's gzipped size.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from './server.mjs';

const outdir = mkdtempSync(join(tmpdir(), 'knock-bundle-'));
try {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0' },
  });
  const bundle = readFileSync(join(outdir, 'index.js'));
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`Worker bundle: ${kib(bundle.length)}, gzipped ${kib(gzipSync(bundle, { level: 9 }).length)} (Cloudflare's limit: 3 MiB gzipped on the free plan)`);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
