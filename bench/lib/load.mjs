// The load generator: autocannon in this process, at fixed concurrency, after a warm-up.
// Latencies are recorded from autocannon's per-response event at full (sub-millisecond) precision;
// autocannon's own histogram rounds to whole milliseconds, too coarse for ratios of fast calls.
//
// The machine is shared, so its speed drifts during a run. Scenarios that are compared with each
// other are measured as a group, interleaved: each round runs every member for a slice of its
// time, so drift lands on all of them alike.
import autocannon from 'autocannon';

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 6);
export const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 1);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/** One autocannon run; `target.after()` (if any) is called when it ends, e.g. to recover a pool. */
const runOnce = (target, limits) =>
  new Promise((resolve, reject) => {
    const { after, ...options } = target;
    const latencies = [];
    const statuses = {};
    const started = process.hrtime.bigint();
    const instance = autocannon({ connections: CONNECTIONS, pipelining: 1, timeout: 30, ...options, ...limits }, (err, result) => {
      after?.();
      if (err) return reject(err);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolve({ latencies, statuses, errors: result.errors + result.timeouts, seconds });
    });
    instance.on('response', (_client, status, _bytes, ms) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 400) latencies.push(ms);
    });
  });

const summarize = (runs) => {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const statuses = {};
  for (const r of runs) for (const [s, n] of Object.entries(r.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const failed = runs.reduce((n, r) => n + r.errors, 0) + Object.entries(statuses).reduce((n, [s, k]) => n + (Number(s) >= 400 ? k : 0), 0);
  const ok = latencies.length;
  return {
    requests: ok,
    failed,
    statuses,
    seconds,
    rps: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: ok ? latencies.reduce((a, b) => a + b, 0) / ok : NaN,
  };
};

/**
 * Measures scenarios side by side: `members` = [{ id, target }] where `target` is an autocannon
 * options object (url, method, headers, body or `requests`). Each member is warmed up, then each
 * round gives every member duration/rounds seconds, in an order rotated from round to round.
 * Returns { id: metrics }; a member whose target is null is skipped.
 */
export async function measureGroup(members, { duration = DURATION_S, warmup = WARMUP_S, rounds = ROUNDS, onMember } = {}) {
  const live = members.filter((m) => m.target);
  const runs = Object.fromEntries(live.map((m) => [m.id, []]));
  if (warmup) for (const m of live) await runOnce(m.target, { duration: warmup });
  for (let r = 0; r < rounds; r++) {
    // Each round starts with a different member, so no scenario always follows the same one.
    for (let i = 0; i < live.length; i++) {
      const m = live[(i + r) % live.length];
      runs[m.id].push(await runOnce(m.target, { duration: duration / rounds }));
    }
  }
  const out = {};
  for (const m of live) {
    out[m.id] = summarize(runs[m.id]);
    onMember?.(m.id, out[m.id]);
  }
  return out;
}

/**
 * A scenario that consumes a pool (codes, fresh users): a fixed number of requests, in `rounds`
 * chunks, each followed by a slice of `companion` (its baseline), so both see the same drift.
 */
export async function measureAmount(target, { amount, warmupAmount, companion, duration = DURATION_S, rounds = ROUNDS }) {
  if (warmupAmount) await runOnce(target, { amount: warmupAmount });
  const runs = [];
  const companionRuns = [];
  for (let r = 0; r < rounds; r++) {
    const chunk = Math.floor(amount / rounds) + (r < amount % rounds ? 1 : 0);
    runs.push(await runOnce(target, { amount: chunk }));
    if (companion) companionRuns.push(await runOnce(companion, { duration: duration / rounds }));
  }
  return { ...summarize(runs), companion: companion ? summarize(companionRuns) : null };
}

/**
 * Two scenarios that consume pools, compared with each other: the same number of requests each,
 * in `rounds` chunks that alternate which goes first, so both see the same drift. `rate` (req/s,
 * over all connections) sends at a steady pace instead of as fast as answers come; `between`
 * runs after each chunk (to let background work finish, say).
 */
export async function measurePair(a, b, { amount, warmupAmount, rounds = ROUNDS, rate, between }) {
  const limits = (n) => ({ amount: n, ...(rate ? { overallRate: rate } : {}) });
  if (warmupAmount) for (const t of [a, b]) await runOnce(t, limits(warmupAmount));
  const runs = { a: [], b: [] };
  for (let r = 0; r < rounds; r++) {
    const chunk = Math.floor(amount / rounds) + (r < amount % rounds ? 1 : 0);
    for (const key of r % 2 ? ['b', 'a'] : ['a', 'b']) {
      runs[key].push(await runOnce(key === 'a' ? a : b, limits(chunk)));
      await between?.();
    }
  }
  return { a: summarize(runs.a), b: summarize(runs.b) };
}
