// `node bench/cpu.mjs [rev]` (default HEAD): what one refresh costs in CPU time, for Knock at `rev`
// (before), Knock from the working tree (after) and the peer, beside the KV baseline.
// `CPU_PATH=user` measures `GET /api/v4/user` instead, beside the KV baseline (the same KV read on
// a bare Hono route); `CPU_PATH=list` one project's access-request list (a page of 20 of
// `CPU_PENDING` pending requests, by its Owner), beside the KV, KV + empty object call and page baselines. Each Knock
// runs on a workerd of its own (the peer and the baseline share the working tree's); the CPU time
// of a workerd process (user + system, all its threads, from /proc) is read before and after a
// fixed number of requests to one member at a time, in rounds whose order rotates. CPU time per
// request hardly moves with what else the machine runs, unlike req/s: a change's effect on the
// refresh path shows here when ab.mjs's ratios are within their noise.
import autocannon from 'autocannon';
import { rotationFloor } from './lib/chains.mjs';
import { CONNECTIONS } from './lib/load.mjs';
import { ROOT } from './lib/paths.mjs';
import { cpuSeconds, threadSeconds } from './lib/proc.mjs';
import { seedBaselineToken } from './lib/runtime.mjs';
import { knockOwnerTargets, knockRefreshChains, peerRefreshChains, versionsAt } from './lib/versions.mjs';

const rev = process.argv[2] ?? 'HEAD';
const AMOUNT = Number(process.env.CPU_REQUESTS ?? 1500);
const ROUNDS = Number(process.env.CPU_ROUNDS ?? 3);
const PATH = process.env.CPU_PATH ?? 'refresh';
const PENDING = Number(process.env.CPU_PENDING ?? 1000);
if (!['refresh', 'user', 'list'].includes(PATH)) throw new Error(`CPU_PATH is refresh, user or list, not ${PATH}`);
const log = (msg) => console.error(`[cpu] ${msg}`);
const versions = versionsAt(rev, 'cpu');

async function side(name, root) {
  const { runtime, pid } = await versions.start(name, root);
  const targets = PATH === 'refresh' ? { refresh: await knockRefreshChains(runtime) } : await knockOwnerTargets(runtime, 'cpu', PATH === 'list' ? PENDING : 0);
  return { runtime, pid, target: targets[PATH] };
}

/** `amount` requests to `target`; the CPU seconds `pid` spent meanwhile, and the answers. */
const measure = (pid, target, amount) =>
  new Promise((resolve, reject) => {
    const { after, ...options } = target;
    const statuses = {};
    const cpu = cpuSeconds(pid);
    const threads = threadSeconds(pid);
    const started = process.hrtime.bigint();
    const instance = autocannon({ connections: CONNECTIONS, pipelining: 1, timeout: 30, ...options, amount }, (err) => {
      after?.();
      if (err) return reject(err);
      const busiest = Math.max(...[...threadSeconds(pid)].map(([tid, t]) => t - (threads.get(tid) ?? 0)));
      resolve({ cpu: cpuSeconds(pid) - cpu, busiest, seconds: Number(process.hrtime.bigint() - started) / 1e9, statuses });
    });
    instance.on('response', (_c, status) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });

try {
  const sides = { before: await side('before', versions.before()), after: await side('after', ROOT) };
  const { urls, mf } = sides.after.runtime;
  await seedBaselineToken(mf);
  const baseline = (id, path, extra) => ({ id, pid: sides.after.pid, target: { url: `${urls.baseline}${path}`, ...extra } });
  const floors = {
    refresh: async () => [
      baseline('kv', '/kv'),
      baseline('one KV write', '/put', { method: 'POST' }),
      baseline('kv + DO call', '/do'),
      { id: 'rotation floor', pid: sides.after.pid, target: rotationFloor(urls.baseline, CONNECTIONS) },
      { id: 'peer refresh', pid: sides.after.pid, target: await peerRefreshChains(sides.after.runtime) },
    ],
    user: async () => [baseline('kv', '/kv')],
    list: async () => [baseline('kv', '/kv'), baseline('kv + DO call', '/do'), baseline('page floor', '/page')],
  };
  const members = [
    ...(await floors[PATH]()),
    { id: `${PATH} before`, pid: sides.before.pid, target: sides.before.target },
    { id: `${PATH} after`, pid: sides.after.pid, target: sides.after.target },
  ];
  log(`before: ${rev}, after: the working tree; ${AMOUNT} requests per member and round, ${ROUNDS} rounds`);
  for (const m of members) await measure(m.pid, m.target, Math.ceil(AMOUNT / 5));
  const totals = Object.fromEntries(members.map((m) => [m.id, { cpu: 0, busiest: 0, seconds: 0, ok: 0, failed: 0 }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < members.length; i++) {
      const m = members[(i + r) % members.length];
      const out = await measure(m.pid, m.target, AMOUNT);
      const t = totals[m.id];
      t.cpu += out.cpu;
      t.busiest += out.busiest;
      t.seconds += out.seconds;
      for (const [s, n] of Object.entries(out.statuses)) t[Number(s) < 400 ? 'ok' : 'failed'] += n;
    }
  }
  const perRequest = (id) => (1e6 * totals[id].cpu) / (totals[id].ok + totals[id].failed);
  console.log(`\nworkerd CPU time per request (µs), ${ROUNDS} × ${AMOUNT} requests each, ${CONNECTIONS} connections:`);
  for (const m of members) {
    const t = totals[m.id];
    const busiest = (1e6 * t.busiest) / (t.ok + t.failed);
    console.log(`  ${m.id.padEnd(16)} ${perRequest(m.id).toFixed(0).padStart(6)} µs (busiest thread ${busiest.toFixed(0).padStart(5)} µs, ${((100 * t.busiest) / t.seconds).toFixed(0)} % busy)  ${(t.ok / t.seconds).toFixed(0).padStart(5)} req/s${t.failed ? `, ${t.failed} failed` : ''}`);
  }
  const ratio = (a, b) => (perRequest(a) / perRequest(b)).toFixed(2);
  if (PATH === 'refresh') console.log(`  peer ÷ refresh, CPU per request: before ${ratio('peer refresh', 'refresh before')}  after ${ratio('peer refresh', 'refresh after')}`);
  else for (const { id } of members.slice(0, -2)) console.log(`  ${PATH} ÷ ${id}, CPU per request: before ${ratio(`${PATH} before`, id)}  after ${ratio(`${PATH} after`, id)}`);
  console.log(`  after ÷ before, CPU per ${PATH}: ${ratio(`${PATH} after`, `${PATH} before`)}`);
} finally {
  await versions.close();
}
