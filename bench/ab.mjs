// `node bench/ab.mjs [rev]` (default HEAD): the goal lines of the hot paths for Knock at `rev`
// (before) and for the working tree (after), measured in one interleaved group, so that the
// machine's drift lands on both alike. Each side runs on its own Miniflare (one workerd each, fresh
// state); the baselines and the peer come from the working tree's. Prints each goal line for
// both sides and after ÷ before for each scenario's req/s and p50.
import { rotationFloor } from './lib/chains.mjs';
import { CONNECTIONS, measureGroup } from './lib/load.mjs';
import { ROOT } from './lib/paths.mjs';
import { seedBaselineToken } from './lib/runtime.mjs';
import { knockOwnerTargets, knockRefreshChains, peerRefreshChains, versionsAt } from './lib/versions.mjs';

const rev = process.argv[2] ?? 'HEAD';
const PENDING = Number(process.env.AB_PENDING ?? 1000);
const log = (msg) => console.error(`[ab] ${msg}`);
const versions = versionsAt(rev, 'ab');

/** One side: its runtime, and the targets of its scenarios. */
async function side(name, root) {
  const { runtime } = await versions.start(name, root);
  const owned = await knockOwnerTargets(runtime, 'ab', PENDING);
  // Refresh: one rotation chain per connection, as the bench drives it.
  const refresh = await knockRefreshChains(runtime);
  log(`${name} (${name === 'before' ? rev : 'the working tree'}): ${PENDING} pending, ${CONNECTIONS} refresh chains`);
  return {
    runtime,
    targets: { ...owned, refresh },
  };
}

const sides = {};
try {
  sides.before = await side('before', versions.before());
  sides.after = await side('after', ROOT);
  const { urls } = sides.after.runtime;
  await seedBaselineToken(sides.after.runtime.mf);
  const members = [
    { id: 'kv', target: { url: `${urls.baseline}/kv` } },
    { id: 'do', target: { url: `${urls.baseline}/do` } },
    { id: 'peer_refresh', target: await peerRefreshChains(sides.after.runtime) },
    { id: 'rotate', target: rotationFloor(urls.baseline, CONNECTIONS) },
    { id: 'page', target: { url: `${urls.baseline}/page` } },
  ];
  // Each scenario's second member shares the machine with the first one's background work (KV
  // and SQLite writes after a refresh): AB_ORDER=after-first swaps them; run both orders.
  const order = process.env.AB_ORDER === 'after-first' ? ['after', 'before'] : ['before', 'after'];
  for (const scenario of ['user', 'list', '304', 'refresh']) for (const s of order) members.push({ id: `${scenario}:${s}`, target: sides[s].targets[scenario] });
  log(`measuring ${members.length} members interleaved`);
  const m = await measureGroup(members, {
    onMember: (id, r) => log(`  ${id}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms${r.failed ? `, ${r.failed} failed` : ''}`),
  });
  const goals = (s) => ({
    'GET /api/v4/user ÷ KV (req/s, ≥ 0.9)': m[`user:${s}`].rps / m.kv.rps,
    'list ÷ KV (req/s, ≥ 0.5)': m[`list:${s}`].rps / m.kv.rps,
    'list ÷ KV + empty DO call (req/s, ≥ 0.8)': m[`list:${s}`].rps / m.do.rps,
    'list ÷ KV + a page of 20 from one DO (req/s)': m[`list:${s}`].rps / m.page.rps,
    'refresh ÷ peer (req/s, ≥ 1.5)': m[`refresh:${s}`].rps / m.peer_refresh.rps,
    '304 poll ÷ GET /api/v4/user (p50, ≤ 1.2)': m[`304:${s}`].p50 / m[`user:${s}`].p50,
  });
  const [b, a] = [goals('before'), goals('after')];
  console.log(`\nGoal lines, ${rev} (before) and the working tree (after), one interleaved group:`);
  for (const k of Object.keys(b)) console.log(`  ${k.padEnd(44)} before ${b[k].toFixed(2)}  after ${a[k].toFixed(2)}`);
  console.log(`  empty DO call ÷ KV baseline (p50)             ${(m.do.p50 / m.kv.p50).toFixed(2)}`);
  console.log(`  rotation floor ÷ peer refresh (req/s)        ${(m.rotate.rps / m.peer_refresh.rps).toFixed(2)}`);
  // The floor of any list page: the KV read, one object call reading 20 rows, and their JSON.
  console.log(`  KV + a page of 20 from one DO ÷ KV + empty DO call (req/s) ${(m.page.rps / m.do.rps).toFixed(2)}  ÷ KV ${(m.page.rps / m.kv.rps).toFixed(2)}`);
  console.log('\nAfter ÷ before:');
  for (const scenario of ['user', 'list', '304', 'refresh']) {
    const [x, y] = [m[`${scenario}:before`], m[`${scenario}:after`]];
    console.log(`  ${scenario.padEnd(8)} req/s ${(y.rps / x.rps).toFixed(2)}  p50 ${(y.p50 / x.p50).toFixed(2)}`);
  }
} finally {
  await versions.close();
}
