// `npm run soak`: the soak's mixed workload (support/soak-workload.mjs) against a local server this
// script starts itself, on fresh state in a temporary directory. A few hundred virtual users sign
// in through the pages and the OAuth flow, refresh their tokens, ask for access, poll, approve and
// deny, and list, with think time between steps: a warm-up of SOAK_WARMUP_SECONDS (default 90:
// memory rises while every Durable Object and cache fills), then SOAK_SECONDS (default 60)
// measured; then every acknowledged write is checked to be there. The RSS of the workerd process
// is sampled from /proc. Exit code 1 on any error outside GitLab's and OAuth 2.0's error shapes,
// on an acknowledged write lost, or on memory still growing in the measured window. (The system
// project runs the same workload for about a minute on every change: soak.test.ts.)
//
// The server is the Worker bundle `wrangler deploy` would upload, run by workerd (Miniflare, no
// dev tooling) with wrangler.toml's bindings as wrangler's own config reader makes them
// (bench/lib/runtime.mjs), by default. SOAK_RUNTIME=wrangler runs `npm start`'s wrangler dev
// instead: its errors count the same, but its memory is not Knock's — wrangler dev's inspector and
// proxy grow by about 30 KB per request even for a hello-world Worker (see docs/testing.md).
//
//   npm run soak                        # 300 virtual users, 90 s warm-up + 60 s
//   SOAK_USERS=500 SOAK_SECONDS=300 npm run soak
//   SOAK_JSON=soak.json npm run soak    # also write the figures as JSON
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildKnock } from '../../bench/lib/build.mjs';
import { newSecrets, startKnockRuntime } from '../../bench/lib/runtime.mjs';
import { startServer } from '../../worker/dev/server.mjs';
import { createSoak } from './support/soak-workload.mjs';

const USERS = Number(process.env.SOAK_USERS) || 300;
const SECONDS = Number(process.env.SOAK_SECONDS) || 60;
/** Memory rises while every object and cache fills; the verdict is taken after this. */
const WARMUP = Number(process.env.SOAK_WARMUP_SECONDS ?? 90);
const SAMPLE_MS = 2000;
const RUNTIME = process.env.SOAK_RUNTIME === 'wrangler' ? 'wrangler' : 'workerd';

const t0 = Date.now();
const log = (msg) => console.error(`[soak ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`);

// ---- the server and its memory ----

const dir = mkdtempSync(join(tmpdir(), 'knock-soak-'));

/** The Worker as deployed: wrangler's bundle and wrangler.toml's bindings, in one workerd process. */
const startWorkerd = async () => {
  const runtime = await startKnockRuntime({ knock: await buildKnock(join(dir, 'bundle')), persistTo: join(dir, 'state') });
  // Miniflare's workerd is a child of this process.
  return { url: runtime.urls.knock, adminToken: runtime.adminToken, owns: (fields) => Number(fields[1]) === process.pid, stop: runtime.dispose };
};

const startWrangler = async () => {
  const { adminToken, tokenHashKey } = newSecrets();
  const server = await startServer({ persistTo: join(dir, 'state'), vars: { ADMIN_TOKEN: adminToken, TOKEN_HASH_KEY: tokenHashKey } });
  // wrangler dev runs in its own process group, workerd included.
  return { url: server.url, adminToken, owns: (fields) => Number(fields[2]) === server.pid, stop: () => server.stop() };
};

log(`starting the server on ${RUNTIME} (state in ${dir})`);
const server = RUNTIME === 'wrangler' ? await startWrangler() : await startWorkerd();
log(`server at ${server.url}`);

/** The server's workerd processes, and their resident memory in MiB. */
const workerdRss = () => {
  const out = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!server.owns(fields) || comm !== 'workerd') continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) out.push({ pid: Number(pid), mib: Number(rss[1]) / 1024 });
    } catch {}
  }
  return out;
};
const samples = [];
const sampler = setInterval(() => {
  const procs = workerdRss();
  samples.push({ t: (Date.now() - t0) / 1000, mib: procs.reduce((a, p) => a + p.mib, 0), procs: procs.length });
}, SAMPLE_MS);

const soak = createSoak({ base: server.url, adminToken: server.adminToken, users: USERS, prefix: `soak${randomBytes(2).toString('hex')}`, seed: Number(process.env.SOAK_SEED) || 1, log });
await soak.setUp();
const { stats } = soak;
const OWNERS = soak.stage.owners.length;

// ---- the run: a warm-up, then the measured window, with the same workload throughout ----

const setupRequests = stats.requests;
stats.byOutcome.clear();
stats.latencies.length = 0;
const runStart = Date.now();
const measuredStart = runStart + WARMUP * 1000;
const stopAt = measuredStart + SECONDS * 1000;
let atMeasuredStart = null;
setTimeout(() => {
  atMeasuredStart = { requests: stats.requests, latencies: stats.latencies.length };
  log(`warm-up over: measuring for ${SECONDS} s`);
}, WARMUP * 1000);
log(`running ${USERS} virtual users and ${OWNERS} approvers: ${WARMUP} s warm-up, then ${SECONDS} s measured`);
const progress = setInterval(() => log(`${stats.requests - setupRequests} requests, ${stats.errors.length} errors, workerd RSS ${samples.at(-1)?.mib.toFixed(0)} MiB`), 10_000);
await soak.run(stopAt);
clearInterval(progress);
clearInterval(sampler);
const end = Date.now();
const requestsAtEnd = stats.requests;
log('checking that every acknowledged write is there');
const lost = await soak.verify();
await server.stop();
rmSync(dir, { recursive: true, force: true });

// ---- the figures ----

const elapsed = (end - measuredStart) / 1000;
const requests = requestsAtEnd - atMeasuredStart.requests;
const totalRequests = requestsAtEnd - setupRequests;
const errors = [...stats.byOutcome].filter(([k]) => k.startsWith('ERROR')).reduce((a, [, n]) => a + n, 0);
const sorted = stats.latencies.slice(atMeasuredStart.latencies).sort((a, b) => a - b);
const percentile = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

// Memory over the measured window: its start and end (means of three samples) and its trend.
const window = samples.filter((s) => s.t * 1000 >= measuredStart - t0);
const mean = (xs) => xs.reduce((a, s) => a + s.mib, 0) / Math.max(1, xs.length);
const slope = (() => {
  if (window.length < 3) return 0;
  const mt = window.reduce((a, s) => a + s.t, 0) / window.length;
  const mm = mean(window);
  const num = window.reduce((a, s) => a + (s.t - mt) * (s.mib - mm), 0);
  const den = window.reduce((a, s) => a + (s.t - mt) ** 2, 0);
  return den ? (num / den) * 60 : 0; // MiB per minute
})();
const first = mean(window.slice(0, 3));
const last = mean(window.slice(-3));
const peak = Math.max(0, ...samples.map((s) => s.mib));
const stable = window.length >= 6 && last <= first * 1.15 + 16 && slope < 30;

const outcomes = Object.fromEntries([...stats.byOutcome].sort());
const figures = {
  runtime: RUNTIME,
  virtualUsers: USERS,
  approvers: OWNERS,
  warmupSeconds: WARMUP,
  seconds: Math.round(elapsed),
  requests,
  requestsIncludingWarmup: totalRequests,
  requestsPerSecond: Math.round(requests / elapsed),
  errorsOutsideContract: errors,
  acknowledged: soak.acknowledged(),
  lost,
  latencyMs: { p50: Math.round(percentile(50)), p95: Math.round(percentile(95)), p99: Math.round(percentile(99)), max: Math.round(sorted.at(-1) ?? 0) },
  memoryMiB: {
    afterWarmup: Math.round(first),
    end: Math.round(last),
    peak: Math.round(peak),
    atStart: Math.round(samples[0]?.mib ?? 0),
    slopePerMinute: Number(slope.toFixed(1)),
    stable,
  },
  outcomes,
};

console.log('\nKnock soak');
console.log(`  ${USERS} virtual users + ${OWNERS} approvers on ${RUNTIME}, ${WARMUP} s warm-up then ${figures.seconds} s measured`);
console.log(`  requests: ${requests} measured (${figures.requestsPerSecond}/s), ${totalRequests} in all`);
console.log(`  errors outside the contract: ${errors} (whole run)`);
const { requests: asked, approvals, ends } = figures.acknowledged;
console.log(`  acknowledged: ${asked} requests, ${approvals} approvals, ${ends - approvals} denials and withdrawals; lost: ${lost.length}`);
for (const problem of lost.slice(0, 10)) console.log(`    ${problem}`);
console.log(`  latency ms: p50 ${figures.latencyMs.p50}, p95 ${figures.latencyMs.p95}, p99 ${figures.latencyMs.p99}, max ${figures.latencyMs.max}`);
console.log(
  `  workerd RSS MiB: ${figures.memoryMiB.atStart} at start, ${figures.memoryMiB.afterWarmup} after warm-up → ${figures.memoryMiB.end} at the end ` +
    `(peak ${figures.memoryMiB.peak}, trend ${figures.memoryMiB.slopePerMinute} MiB/min): ${stable ? 'stable' : 'NOT stable'}`,
);
console.log('  outcomes (whole run):');
for (const [k, n] of Object.entries(outcomes)) console.log(`    ${String(n).padStart(7)}  ${k}`);
if (stats.errors.length) console.log(`  first errors:\n    ${stats.errors.slice(0, 10).join('\n    ')}`);
if (process.env.SOAK_JSON) writeFileSync(process.env.SOAK_JSON, `${JSON.stringify({ ...figures, memorySamples: samples }, null, 2)}\n`);
process.exit(errors === 0 && lost.length === 0 && stable ? 0 : 1);
