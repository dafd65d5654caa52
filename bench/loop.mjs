// `node bench/loop.mjs [rev]` (default HEAD): Knock's own CPU time per API call, for Knock at `rev`
// (before) and the working tree (after). Each version runs on a workerd of its own, built from
// bench/loop/knock.ts (Knock's Worker plus a bench-only route that hands Knock's `fetch` LOOP_CALLS
// requests one after another (a tenth of them for the list, whose object call costs ten times more), the token's KV read answered from memory); the CPU time of the
// workerd process (from /proc) over one such loop, divided by its calls, is what Knock's path
// costs without HTTP and the local KV's storage, where most of bench/cpu.mjs's figure goes. What
// else runs on the shared machine only adds to a loop's CPU time (a loop measured up to twice its
// quiet figure while other engineers' tests ran), so each side's figure is its fastest loop of the
// rounds, with the median beside it.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './lib/paths.mjs';
import { cpuSeconds } from './lib/proc.mjs';
import { knockOwnerTargets, versionsAt } from './lib/versions.mjs';

const rev = process.argv[2] ?? 'HEAD';
const CALLS = Number(process.env.LOOP_CALLS ?? 10000);
const ROUNDS = Number(process.env.LOOP_ROUNDS ?? 10);
const PENDING = Number(process.env.LOOP_PENDING ?? 1000);
const PATHS = (process.env.LOOP_PATHS ?? 'user,list').split(',');
const ENTRY = 'bench/loop/knock.ts';
const log = (msg) => console.error(`[loop] ${msg}`);
const versions = versionsAt(rev, 'loop');

async function side(name, root) {
  // A revision from before this tool gets the loop's entry from the working tree.
  if (root !== ROOT) {
    mkdirSync(dirname(join(root, ENTRY)), { recursive: true });
    copyFileSync(join(ROOT, ENTRY), join(root, ENTRY));
  }
  const { runtime, pid } = await versions.start(name, root, ENTRY);
  return { runtime, pid, targets: await knockOwnerTargets(runtime, 'loop', PENDING) };
}

/** Calls per loop of each path: about a second of CPU each. */
const callsOf = (path) => (path === 'list' ? Math.ceil(CALLS / 10) : CALLS);

/** One loop of `calls` requests to `target` in the side's isolate: CPU seconds of its workerd, and the answers' statuses. */
const loop = async ({ runtime, pid }, target, calls) => {
  const cpu = cpuSeconds(pid);
  const res = await fetch(`${runtime.urls.knock}/__loop`, { method: 'POST', body: JSON.stringify({ target: target.url, headers: target.headers, n: calls }) });
  if (!res.ok) throw new Error(`loop answered ${res.status}: ${await res.text()}`);
  const statuses = await res.json();
  return { cpu: cpuSeconds(pid) - cpu, statuses };
};

try {
  const sides = { before: await side('before', versions.before()), after: await side('after', ROOT) };
  log(`before: ${rev}, after: the working tree; ${CALLS} calls per loop, ${ROUNDS} rounds`);
  const totals = {};
  for (const path of PATHS) for (const s of ['before', 'after']) await loop(sides[s], sides[s].targets[path], Math.ceil(callsOf(path) / 5));
  for (let r = 0; r < ROUNDS; r++) {
    for (const path of PATHS) {
      // The order of the two sides alternates from round to round.
      for (const s of r % 2 ? ['after', 'before'] : ['before', 'after']) {
        const out = await loop(sides[s], sides[s].targets[path], callsOf(path));
        const failed = Object.entries(out.statuses).filter(([status]) => Number(status) >= 400);
        if (failed.length) throw new Error(`${path} ${s}: ${JSON.stringify(out.statuses)}`);
        ((totals[path] ??= {})[s] ??= []).push((1e6 * out.cpu) / callsOf(path));
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fastest = (xs) => Math.min(...xs);
  console.log(`\nworkerd CPU time per call of Knock's fetch (µs), ${ROUNDS} loops of ${CALLS} calls (the list ${callsOf('list')}) per side: fastest loop (median)`);
  for (const path of PATHS) {
    const [b, a] = [totals[path].before, totals[path].after];
    const figure = (xs) => `${fastest(xs).toFixed(1).padStart(6)} (${median(xs).toFixed(1)})`;
    // Each round measures the two sides back to back: the median of their ratios, round by round.
    const paired = median(a.map((x, r) => x / b[r]));
    console.log(`  ${path.padEnd(6)} before ${figure(b)}  after ${figure(a)}  after ÷ before ${(fastest(a) / fastest(b)).toFixed(3)} (${(median(a) / median(b)).toFixed(3)}; round by round ${paired.toFixed(3)})`);
  }
} finally {
  await versions.close();
}
