// Builds what the bench runs: Knock exactly as `wrangler deploy` would upload it, and the bench's
// own Workers (baselines, peer, seeder) with esbuild.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { ROOT } from './paths.mjs';

export async function buildKnock(outdir) {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0', WRANGLER_LOG: 'error' },
  });
  return join(outdir, 'index.js');
}

export async function buildBenchWorker(entry, outfile) {
  await esbuild.build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2024',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*', 'node:*'],
    minify: false,
    logLevel: 'warning',
  });
  return outfile;
}
