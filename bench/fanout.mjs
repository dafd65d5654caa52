// `node bench/fanout.mjs`: what the designs with one copy of a registry row fewer would cost
// (docs/decisions.md, "Not built yet"; docs/performance.md, "One copy fewer, measured").
//
// Runs bench/fanout/worker.ts alone on one Miniflare (workerd on 127.0.0.1, state on /dev/shm,
// deleted at the end), seeds FANOUT_ROWS rows in all (1,000 and 100,000) into one object and,
// the same rows, into 64 objects by id mod 64, checks that both designs answer the same pages,
// and measures one interleaved group (bench/lib/load.mjs: BENCH_CONNECTIONS, BENCH_DURATION,
// BENCH_WARMUP, BENCH_ROUNDS):
// - a page of 20 projects by id descending and by name, the first page and the one at offset
//   FANOUT_OFFSET (1,000; at 1,000 rows the last full page), from one object against the fan-out
//   to 64 (each answering its first offset + 20, merged in the Worker);
// - an access request deciding on the settings in its own object against the same request that
//   first asks the registry row's owner for them (one object call more).
// Prints p50 and req/s of each, fan-out ÷ one object and asks ÷ own, and the load average.
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBenchWorker } from './lib/build.mjs';
import { measureGroup } from './lib/load.mjs';
import { freshStateDir, knockConfig, script, socket, start as startWorkers } from './lib/runtime.mjs';

const SIZES = (process.env.FANOUT_ROWS ?? '1000,100000').split(',').map(Number);
const OFFSET = Number(process.env.FANOUT_OFFSET ?? 1000);
const PER_PAGE = 20;
const log = (msg) => console.error(`[fanout] ${msg}`);
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const work = mkdtempSync(join(tmpdir(), 'knock-fanout-'));
const state = freshStateDir();
let runtime;
try {
  const path = await buildBenchWorker('bench/fanout/worker.ts', join(work, 'fanout.mjs'));
  runtime = await startWorkers(
    [
      {
        ...socket('fanout'),
        ...knockConfig().compat,
        ...script(path),
        durableObjects: { REGISTRY: { className: 'RegistryPart', useSQLite: true }, DECIDER: { className: 'Decider', useSQLite: true } },
      },
    ],
    { persistTo: state },
  );
  const base = runtime.urls.fanout;
  const call = async (method, path) => {
    const res = await fetch(`${base}${path}`, { method });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  const members = [];
  const pages = [];
  for (const rows of SIZES) {
    const t0 = Date.now();
    const { listed, listedInParts } = await call('POST', `/seed?rows=${rows}`);
    if (listed !== listedInParts) throw new Error(`${rows} rows: one object lists ${listed}, the parts ${listedInParts}`);
    const deep = Math.min(OFFSET, listed - PER_PAGE);
    log(`${rows} rows seeded in ${Date.now() - t0} ms: ${listed} listed; deep page at offset ${deep}`);
    for (const order of ['id', 'name']) {
      for (const offset of [0, deep]) {
        const q = `rows=${rows}&order=${order}&offset=${offset}`;
        // Both designs must answer the same page before their costs are compared.
        const [one, fan] = await Promise.all([call('GET', `/one?${q}`), call('GET', `/fan?${q}`)]);
        const ids = (p) => `${p.total}:${p.rows.map((r) => r.id).join(',')}`;
        if (ids(one) !== ids(fan) || one.rows.length !== PER_PAGE) throw new Error(`${q}: one object ${ids(one)}, fan-out ${ids(fan)}`);
        const id = `${rows}:${order}:${offset}`;
        pages.push({ id, rows, order, offset });
        members.push({ id: `${id}:one`, target: { url: `${base}/one?${q}` } }, { id: `${id}:fan`, target: { url: `${base}/fan?${q}` } });
      }
    }
  }
  await call('POST', `/decide/setup?rows=${SIZES[0]}`);
  members.push({ id: 'decide:own', target: { url: `${base}/decide`, method: 'POST' } }, { id: 'decide:asks', target: { url: `${base}/decide?asks=1`, method: 'POST' } });

  const loadBefore = load();
  log(`measuring ${members.length} members interleaved (load average ${loadBefore})`);
  const m = await measureGroup(members, {
    onMember: (id, r) => log(`  ${id}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms${r.failed ? `, ${r.failed} failed` : ''}`),
  });
  const failed = Object.entries(m).filter(([, r]) => r.failed || !r.requests);
  if (failed.length) throw new Error(`failed or no requests: ${failed.map(([id, r]) => `${id} ${r.failed} failed, ${r.requests} answered`).join('; ')}`);

  const f = (x, d = 2) => x.toFixed(d);
  console.log(`\nOne copy fewer, measured (${new Date().toISOString().slice(0, 16)} UTC; load average ${loadBefore} before, ${load()} after):`);
  console.log('rows     order  offset   one p50  fan p50   ÷    one req/s  fan req/s   ÷');
  for (const p of pages) {
    const [one, fan] = [m[`${p.id}:one`], m[`${p.id}:fan`]];
    console.log(
      `${String(p.rows).padEnd(8)} ${p.order.padEnd(6)} ${String(p.offset).padStart(6)}  ${f(one.p50).padStart(7)}  ${f(fan.p50).padStart(7)}  ${f(fan.p50 / one.p50, 1).padStart(5)}` +
        `  ${f(one.rps, 0).padStart(9)}  ${f(fan.rps, 0).padStart(9)}  ${f(fan.rps / one.rps).padStart(5)}`,
    );
  }
  const [own, asks] = [m['decide:own'], m['decide:asks']];
  console.log(`\nrequest deciding on its own copy: p50 ${f(own.p50)} ms, ${f(own.rps, 0)} req/s`);
  console.log(`request asking the registry first: p50 ${f(asks.p50)} ms, ${f(asks.rps, 0)} req/s`);
  console.log(`asks ÷ own: p50 ${f(asks.p50 / own.p50)} (+${f(asks.p50 - own.p50)} ms), req/s ${f(asks.rps / own.rps)}`);
} finally {
  await runtime?.mf.dispose().catch(() => {});
  rmSync(work, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
