// `node bench/fanout.mjs`: what the designs with one copy of a registry row fewer would cost
// (docs/decisions.md, "Not built yet"; docs/performance.md, "One copy fewer, measured").
//
// Runs bench/fanout/worker.ts alone on one Miniflare (workerd on 127.0.0.1, state on /dev/shm,
// deleted at the end), seeds FANOUT_ROWS rows in all (1,000 and 100,000) into one object and,
// the same rows, into 64 objects by id mod 64, checks that both designs answer the same pages,
// times each member alone (one request at a time), then measures them in one interleaved group
// (bench/lib/load.mjs: BENCH_CONNECTIONS, BENCH_DURATION, BENCH_ROUNDS):
// - a page of 20 projects by id descending and by name, the first page and the one at offset
//   FANOUT_OFFSET (1,000; at 1,000 rows the last full page), from one object against the fan-out
//   to 64 (each answering its first offset + 20, merged in the Worker);
// - an access request deciding on the settings in its own object against the same request that
//   first asks the registry row's owner for them (one object call more).
// Prints each member's latency alone (and one of the fan-out's calls alone), p50 and req/s, the
// ratios fan-out ÷ one object and asks ÷ own, and the load average. About 5 minutes.
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBenchWorker } from './lib/build.mjs';
import { CONNECTIONS, DURATION_S, ROUNDS, measureGroup } from './lib/load.mjs';
import { freshStateDir, knockConfig, script, socket, start as startWorkers } from './lib/runtime.mjs';

const SIZES = (process.env.FANOUT_ROWS ?? '1000,100000').split(',').map(Number);
const OFFSET = Number(process.env.FANOUT_OFFSET ?? 1000);
const PER_PAGE = 20;
/** How many times its pace alone a member answers at BENCH_CONNECTIONS, at most (here about 3 for the fastest, 1 for a fan-out). */
const PACE = 3;
const log = (msg) => console.error(`[fanout] ${msg}`);
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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
  /** The median of five requests one at a time, after two, in ms. */
  const timeAlone = async (method, path) => {
    const times = [];
    for (let i = 0; i < 7; i++) {
      const t0 = process.hrtime.bigint();
      await call(method, path);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return median(times.slice(2));
  };
  /**
   * A member: its latency alone, and its target, a fixed number of requests per round of at most
   * about BENCH_DURATION / BENCH_ROUNDS seconds (at least one per connection). A round of fixed
   * time would leave its last requests in flight, and a deep fan-out's would run on into the next
   * member's round.
   */
  const member = async (id, method, path) => {
    const alone = await timeAlone(method, path);
    const amount = Math.max(CONNECTIONS, Math.round((DURATION_S / ROUNDS) * (1000 / alone) * PACE));
    return { id, alone, target: { url: `${base}${path}`, method, amount } };
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
        // The busiest part's share of the rows is about 1/64 of them: part 0's answer stands for each.
        pages.push({ id, rows, order, offset, part: await timeAlone('GET', `/fan?${q}&p=0`) });
        members.push(await member(`${id}:one`, 'GET', `/one?${q}`), await member(`${id}:fan`, 'GET', `/fan?${q}`));
      }
    }
  }
  await call('POST', `/decide/setup?rows=${SIZES[0]}`);
  members.push(await member('decide:own', 'POST', '/decide'), await member('decide:asks', 'POST', '/decide?asks=1'));
  const alone = Object.fromEntries(members.map((x) => [x.id, x.alone]));

  const loadBefore = load();
  log(`measuring ${members.length} members interleaved (load average ${loadBefore})`);
  // The members were warmed up by their requests alone.
  const m = await measureGroup(members, {
    warmup: 0,
    onMember: (id, r) => log(`  ${id}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms${r.failed ? `, ${r.failed} failed` : ''}`),
  });
  const failed = Object.entries(m).filter(([, r]) => r.failed || !r.requests);
  if (failed.length) throw new Error(`failed or no requests: ${failed.map(([id, r]) => `${id} ${r.failed} failed, ${r.requests} answered`).join('; ')}`);

  const f = (x, d = 2) => x.toFixed(d);
  const signed = (x) => `${x < 0 ? '' : '+'}${f(x)}`;
  console.log(`\nOne copy fewer, measured (${new Date().toISOString().slice(0, 16)} UTC; load average ${loadBefore} before, ${load()} after):`);
  console.log(`A page of 20; ms alone (one request at a time; "part": one of the fan-out's calls alone), p50 (ms) and req/s at ${CONNECTIONS} connections; fan-out ÷ one object:`);
  console.log('rows     order  offset |  one alone  fan alone    ÷  part alone |  one p50  fan p50     ÷  | one req/s  fan req/s     ÷');
  const n = (x, d) => f(x, d === 0 && x < 10 ? 1 : d);
  const cols = (a, b, d) => `${n(a, d).padStart(9)}  ${n(b, d).padStart(9)}  ${f(b / a, b / a < 10 ? 2 : 1).padStart(5)}`;
  for (const p of pages) {
    const [one, fan] = [`${p.id}:one`, `${p.id}:fan`];
    console.log(
      `${String(p.rows).padEnd(8)} ${p.order.padEnd(6)} ${String(p.offset).padStart(6)} | ${cols(alone[one], alone[fan], 2)}  ${f(p.part).padStart(10)} | ${cols(m[one].p50, m[fan].p50, 2)} | ${cols(m[one].rps, m[fan].rps, 0)}`,
    );
  }
  const [own, asks] = [m['decide:own'], m['decide:asks']];
  console.log(`\nAn access request deciding on its own copy of the settings: ${f(alone['decide:own'])} ms alone, p50 ${f(own.p50)} ms, ${f(own.rps, 0)} req/s`);
  console.log(`The same asking the registry row's object first:          ${f(alone['decide:asks'])} ms alone, p50 ${f(asks.p50)} ms, ${f(asks.rps, 0)} req/s`);
  console.log(
    `asks ÷ own: alone ${f(alone['decide:asks'] / alone['decide:own'])} (${signed(alone['decide:asks'] - alone['decide:own'])} ms), p50 ${f(asks.p50 / own.p50)} (${signed(asks.p50 - own.p50)} ms), req/s ${f(asks.rps / own.rps)}`,
  );
} finally {
  await runtime?.mf.dispose().catch(() => {});
  rmSync(work, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
