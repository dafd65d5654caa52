// Builds what the bench runs: Knock exactly as `wrangler deploy` would upload it, and the bench's
// own Workers (baselines, peer, seeder) with esbuild.
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import * as esbuild from 'esbuild';
import { ROOT } from './paths.mjs';

/**
 * Knock's bundle as `wrangler deploy` would upload it; `root`: another checkout of the repository
 * (bench/ab.mjs); `entry`: another module than wrangler.toml's `main` (bench/loop.mjs), its path from `root`.
 */
export async function buildKnock(outdir, root = ROOT, entry) {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir, ...(entry ? [entry] : [])], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0', WRANGLER_LOG: 'error' },
  });
  return join(outdir, entry ? basename(entry).replace(/\.ts$/, '.js') : 'index.js');
}

/**
 * Knock counted (bench/counted/worker.ts): its Worker, and each Durable Object class wrangler.toml
 * binds (`classes`, by binding) exported under its own name with its calls counted.
 */
export async function buildCountedKnock(outfile, classes) {
  const names = [...new Set(Object.values(classes))];
  const contents = [
    `import * as product from './worker/index';`,
    `import { counted } from './bench/counted/worker';`,
    `export { default } from './bench/counted/worker';`,
    ...names.map((name) => `export const ${name} = counted(product.${name});`),
  ].join('\n');
  return buildBenchWorker({ contents, resolveDir: ROOT, loader: 'ts', sourcefile: 'counted-entry.ts' }, outfile);
}

/** A bench Worker: `entry` is a path from the repository's root, or esbuild's `stdin` options. */
export async function buildBenchWorker(entry, outfile) {
  await esbuild.build({
    ...(typeof entry === 'string' ? { entryPoints: [join(ROOT, entry)] } : { stdin: entry }),
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
