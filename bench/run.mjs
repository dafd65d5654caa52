// `npm run bench`: Knock, two baselines and a peer side by side on one workerd (Miniflare's API,
// 127.0.0.1, fresh state), each scenario driven by autocannon in this process at fixed
// concurrency after a warm-up. Prints one table with the goals, writes bench/results.json and
// docs/bench.svg. Absolute numbers drift on a shared machine; the ratios are the result.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBenchWorker, buildCountedKnock, buildKnock } from './lib/build.mjs';
import { refreshChains, rotationFloor } from './lib/chains.mjs';
import { call } from './lib/http.mjs';
import { inboxPoll, measurePolls, oldWayPoll, seedOwner } from './lib/inbox.mjs';
import { CONNECTIONS, DURATION_S, ROUNDS, WARMUP_S, measureAmount, measureGroup, measurePair } from './lib/load.mjs';
import { BENCH, ROOT } from './lib/paths.mjs';
import { buildExtension, popupSize } from './lib/popup-size.mjs';
import { startReceiver } from './lib/receiver.mjs';
import { renderSvg, renderTable, verdict } from './lib/report.mjs';
import { oidcScenarios } from './lib/oidc.mjs';
import { ruleScenarios } from './lib/rules.mjs';
import { PARTITIONS, partitionScenarios } from './lib/partitions.mjs';
import { durableObjectClasses, freshStateDir, seedBaselineToken, startRuntime } from './lib/runtime.mjs';
import * as setup from './lib/setup.mjs';

const started = Date.now();
const log = (msg) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
const SCALE = (process.env.BENCH_SCALE ?? '10,10000,100000').split(',').map(Number);
const CYCLES = Number(process.env.BENCH_CYCLES ?? 900);
const CODES = Number(process.env.BENCH_CODES ?? 1800);
const APPROVALS = Number(process.env.BENCH_APPROVALS ?? 600);
/** Approvals per second in the webhook comparison: steady, well below what one project's object takes. */
const APPROVE_RATE = Number(process.env.BENCH_APPROVE_RATE ?? 25);
/** Webhooks attached to the project of the `approve_hooks` scenario. */
const HOOKS = 3;
const WARM_POOL = 100;
/** `BENCH_ONLY=inbox` runs only the inbox scenarios, `partitions` only those of issue 16, `oidc` only OpenID Connect's, `rules` only the access request rules', `core` only the others; default all. */
const ONLY = (process.env.BENCH_ONLY ?? 'all').split(',');
const runs = (part) => ONLY.includes('all') || ONLY.includes(part);
const INBOX_SCALE = (process.env.BENCH_INBOX_SCALE ?? '10,10000').split(',').map(Number);
// Each autocannon run builds one request per connection ahead; pools get that much slack.
const SLACK = 2 * CONNECTIONS * (ROUNDS + 1);

const work = mkdtempSync(join(tmpdir(), 'knock-bench-'));
const state = freshStateDir();

const form = (fields) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const bearer = (token) => ({ authorization: `Bearer ${token}` });
const firstLine = (e) => String(e?.message ?? e).split('\n')[0].slice(0, 160);
const need = (value, why) => {
  if (value === undefined || value === null) throw new Error(why);
  return value;
};
/** Takes from a pool; an exhausted pool yields a value the server refuses (counted as failed). */
const take = (pool, fallback) => (pool.length ? pool.pop() : fallback);

const results = {
  generatedAt: new Date().toISOString(),
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${process.platform}-${process.arch}` },
  settings: {
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    warmupSeconds: WARMUP_S,
    rounds: ROUNDS,
    loadGenerator: 'autocannon 9, in process',
    runtime: 'workerd through the Miniflare 5 API, one process, state on tmpfs',
  },
  scenarios: [],
  scale: { available: false, reason: 'not run' },
  inbox: { available: false, reason: 'not run' },
  partitions: { available: false, reason: 'not run' },
  oidc: { available: false, reason: 'not run' },
  rules: { available: false, reason: 'not run' },
  popup: { available: false, reason: 'not run' },
  webhooks: { available: false, reason: 'not run' },
  goals: [],
};
const byId = new Map();

/** Registers a scenario row; `why` (when set) makes it "not available". */
const row = (id, label, extra = {}) => {
  const entry = { id, label, available: false, reason: 'not run', ...extra };
  byId.set(id, entry);
  results.scenarios.push(entry);
  return entry;
};
const record = (id, m) => {
  const entry = byId.get(id);
  Object.assign(entry, { available: true, reason: undefined, ...m });
  if (m.failed > 0) entry.note = [entry.note, `${m.failed} failed: ${JSON.stringify(m.statuses)}`].filter(Boolean).join('; ');
  log(`  ${entry.label}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms${m.failed ? `, ${m.failed} failed` : ''}`);
};
const unavailable = (id, why) => {
  Object.assign(byId.get(id), { available: false, reason: why });
  log(`  ${byId.get(id).label}: not available — ${why}`);
};

/** Checks a scenario's request once; a missing route or refused set-up says why, early. */
async function probe(url, init, expected) {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  if (![].concat(expected).includes(res.status)) throw new Error(`${init?.method ?? 'GET'} ${new URL(url).pathname} answered ${res.status}: ${text.slice(0, 100)}`);
  return text;
}

/**
 * Storage round trips the Worker makes for one request of a scenario, counted by the counter
 * Worker (Knock's app with counting bindings, on the same state). Calls Durable Objects make
 * among themselves are not seen.
 */
async function countRoundTrips(id, requests, { warm = false } = {}) {
  const total = { kv: [], do: [] };
  try {
    // A warm count first sends each (idempotent) request once uncounted, so in-isolate caches are
    // as they are during the measured run.
    if (warm) for (const { path, init } of requests) await (await fetch(`${runtime.urls.counter}${path}`, { redirect: 'manual', ...init })).arrayBuffer();
    for (const { path, init, expect } of requests) {
      const res = await fetch(`${runtime.urls.counter}${path}`, { redirect: 'manual', ...init });
      await res.arrayBuffer();
      if (res.status !== expect) throw new Error(`${path} answered ${res.status}`);
      const counts = JSON.parse(res.headers.get('x-bench-round-trips'));
      total.kv.push(...counts.kv);
      total.do.push(...counts.do);
    }
    byId.get(id).roundTrips = total;
  } catch (e) {
    log(`  (could not count round trips for ${id}: ${firstLine(e)})`);
  }
}

/** A target whose probe failed is left out of its group and its row says why. */
async function prepared(id, make) {
  try {
    return await make();
  } catch (e) {
    unavailable(id, firstLine(e));
    return null;
  }
}

if (runs('core')) {
  row('baseline_json', 'baseline: Hono, fixed JSON');
  row('baseline_kv', 'baseline: Hono + one KV read');
  row('baseline_do', 'baseline: Hono + one KV read + one empty Durable Object call');
  row('api_user', 'GET /api/v4/user (OAuth token)', { baseline: 'baseline_kv', peer: 'peer_api' });
  row('peer_api', 'peer: token-checked API call');
  row('list', 'list access requests (page of 20)', { baseline: 'baseline_kv' });
  row('cycle', 'request + approve (fresh user, owner)', { baseline: 'baseline_kv', note: 'req/s = cycles/s, 2 calls each; latency per call' });
  row('approve', `approve a pending request at ${APPROVE_RATE}/s, no webhooks`, {
    note: 'measured beside the next row in alternating chunks, at a steady rate (latency at equal load); the saturated comparison is printed below the table',
  });
  row('approve_hooks', `approve a pending request at ${APPROVE_RATE}/s, ${HOOKS} webhooks`);
  row('code_exchange', 'code exchange', { baseline: 'baseline_kv' });
  row('refresh', 'refresh (rotating, chain per connection)', { baseline: 'baseline_kv', peer: 'peer_refresh' });
  row('peer_refresh', 'peer: refresh (rotating, chain per conn.)');
}

/**
 * The owners' inbox (`GET /api/v4/access_requests`): an owner of 50 groups of 20 projects with 10
 * pending requests in all. Interleaved: the inbox, one project's list, the inbox answered 304,
 * and `GET /api/v4/user`, all with that owner's OAuth access token (as the extension polls). Then the inbox of an owner of 10 projects
 * against one of 10,000 (10 pending each), and whole polls the old way (4 + N requests, as the
 * extension did) against inbox polls, one client each.
 */
async function inboxScenarios(urls, adminToken) {
  const main = { groups: 50, perGroup: 20 };
  log(`inbox: seeding an owner of ${main.groups} groups × ${main.perGroup} projects, and owners of ${INBOX_SCALE.join(' and ')} projects; 10 pending requests each`);
  let owner;
  const scaled = {};
  try {
    const t0 = Date.now();
    const requesters = await setup.seedUsers(urls.seeder, 'inboxreq', 0, 10);
    // The main owner polls with an OAuth access token, as the extension does.
    const app = await setup.createApplication(urls.knock, adminToken);
    owner = await seedOwner(urls.seeder, { prefix: 'inboxa', ...main, requesters, owner: await setup.oauthUser(urls.knock, adminToken, app, 'inboxa0') });
    for (const n of INBOX_SCALE) scaled[n] = await seedOwner(urls.seeder, { prefix: `inboxs${n}`, flat: n, requesters });
    log(`  seeded ${(owner.sources.length + INBOX_SCALE.reduce((a, b) => a + b, 0)).toLocaleString('en-US')} groups and projects in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (e) {
    results.inbox = { available: false, reason: `seeding failed: ${firstLine(e)}` };
    log(`  ${results.inbox.reason}`);
    return;
  }
  const headers = (token, extra = {}) => ({ 'PRIVATE-TOKEN': token, ...extra });
  const inboxPath = '/api/v4/access_requests';
  const project = owner.pending.find((s) => s.kind === 'project');
  const listPath = `/api/v4/projects/${project.id}/access_requests?per_page=20`;
  const sources = owner.sources.length.toLocaleString('en-US');
  row('inbox', `inbox (${sources} sources, 10 pending)`);
  row('inbox_list', 'one project list, same owner (1 pending)');
  row('inbox_304', 'inbox answered 304 (If-None-Match)');
  row('inbox_user', 'GET /api/v4/user, same owner');
  for (const n of INBOX_SCALE) row(`inbox_${n}`, `inbox of an owner of ${n.toLocaleString('en-US')} projects`);
  try {
    const first = await fetch(`${urls.knock}${inboxPath}`, { headers: headers(owner.token) });
    const items = await first.json();
    if (first.status !== 200 || items.length !== 10) throw new Error(`the inbox answered ${first.status} with ${items.length} requests, not 10`);
    const etag = first.headers.get('etag');
    const targets = {
      inbox: { path: inboxPath, headers: headers(owner.token), expect: 200 },
      inbox_list: { path: listPath, headers: headers(owner.token), expect: 200 },
      inbox_304: { path: inboxPath, headers: headers(owner.token, { 'if-none-match': etag }), expect: 304 },
      inbox_user: { path: '/api/v4/user', headers: headers(owner.token), expect: 200 },
    };
    for (const [n, o] of Object.entries(scaled)) targets[`inbox_${n}`] = { path: inboxPath, headers: headers(o.token), expect: 200 };
    for (const [id, t] of Object.entries(targets)) {
      await probe(`${urls.knock}${t.path}`, { headers: t.headers }, t.expect);
      await countRoundTrips(id, [{ path: t.path, init: { headers: t.headers }, expect: t.expect }], { warm: true });
    }
    const target = (id) => ({ url: `${urls.knock}${targets[id].path}`, headers: targets[id].headers });
    log('inbox, one list, 304 poll, GET /api/v4/user');
    // The KV and the KV + empty Durable Object call baselines in the same group: what one object
    // call costs beside the same KV read, in this run, is the floor of the 304 poll's line.
    const floors = [
      { id: 'floor_kv', target: { url: `${urls.baseline}/kv` } },
      { id: 'floor_do', target: { url: `${urls.baseline}/do` } },
    ];
    const m = await measureGroup([...['inbox', 'inbox_list', 'inbox_304', 'inbox_user'].map((id) => ({ id, target: target(id) })), ...floors], {
      onMember: (id, r) => (byId.has(id) ? record(id, r) : log(`  baseline ${id === 'floor_kv' ? 'KV' : 'KV + empty DO call'}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms`)),
    });
    log(`inbox at ${INBOX_SCALE.join(' and ')} managed projects`);
    const s = await measureGroup(INBOX_SCALE.map((n) => ({ id: `inbox_${n}`, target: target(`inbox_${n}`) })), { onMember: record });
    log('whole polls: the old way (4 + N requests) and the inbox, one client each');
    const polls = await measurePolls([
      { id: 'old', poll: () => oldWayPoll(urls.knock, owner.token) },
      { id: 'inbox', poll: () => inboxPoll(urls.knock, owner.token) },
    ]);
    for (const [id, p] of Object.entries(polls)) log(`  ${id}: ${p.polls} polls, p50 ${p.p50.toFixed(2)} ms, ${p.requests} requests, ${p.found} pending found`);
    const [small, large] = [INBOX_SCALE[0], INBOX_SCALE.at(-1)];
    results.inbox = {
      available: true,
      sources: owner.sources.length,
      pending: 10,
      p50: { inbox: m.inbox.p50, list: m.inbox_list.p50, notModified: m.inbox_304.p50, user: m.inbox_user.p50, baselineKv: m.floor_kv.p50, baselineDo: m.floor_do.p50 },
      polls,
      scale: { small, large, p50Small: s[`inbox_${small}`].p50, p50Large: s[`inbox_${large}`].p50 },
      ratios: {
        inboxToList: m.inbox.p50 / m.inbox_list.p50,
        oldWayToInbox: polls.old.p50 / polls.inbox.p50,
        notModifiedToUser: m.inbox_304.p50 / m.inbox_user.p50,
        emptyCallToKv: m.floor_do.p50 / m.floor_kv.p50,
        largeToSmall: s[`inbox_${large}`].p50 / s[`inbox_${small}`].p50,
      },
    };
  } catch (e) {
    results.inbox = { available: false, reason: firstLine(e) };
    log(`  inbox scenarios failed: ${results.inbox.reason}`);
  }
}

let runtime;
try {
  // ---- build and start
  log('building Knock (wrangler deploy --dry-run) and the bench Workers (esbuild)');
  const [knockBundle, baselineBundle, peerBundle, seederBundle, counterBundle, countedBundle] = await Promise.all([
    buildKnock(join(work, 'knock')),
    buildBenchWorker('bench/baselines/worker.ts', join(work, 'baseline.mjs')),
    buildBenchWorker('bench/peer/worker.ts', join(work, 'peer.mjs')),
    buildBenchWorker('bench/seeder/worker.ts', join(work, 'seeder.mjs')),
    buildBenchWorker('bench/counter/worker.ts', join(work, 'counter.mjs')),
    buildCountedKnock(join(work, 'counted.mjs'), durableObjectClasses()),
  ]);
  if (process.env.BENCH_SKIP_EXTENSION_BUILD !== '1' && runs('core')) {
    log('building the extension (wxt build extension)');
    try {
      buildExtension();
    } catch (e) {
      results.popup = { available: false, reason: `extension build failed: ${firstLine(e.stderr ?? e)}` };
    }
  }
  runtime = await startRuntime({ knock: knockBundle, baseline: baselineBundle, peer: peerBundle, seeder: seederBundle, counter: counterBundle, persistTo: state });
  const { urls, adminToken } = runtime;
  log(`workerd up: ${Object.entries(urls).map(([k, v]) => `${k} ${v}`).join(', ')}`);

  // The counter is an isolate of its own: its first request makes the once-per-isolate check of
  // the partition count (worker/middleware/partition-count.ts, one Directory call), which would
  // otherwise be counted in the window of the first scenario counted (GET /api/v4/user).
  await probe(`${urls.counter}/api/v4/version`, {}, 401);

  // ---- set-up (not measured)
  await seedBaselineToken(runtime.mf);

  // ---- the core scenarios (BENCH_ONLY=inbox skips them)
  if (runs('core')) {
    const knock = {};
    try {
      knock.app = await setup.createApplication(urls.knock, adminToken);
      knock.users = await setup.inPool(Array.from({ length: CONNECTIONS }, (_, i) => `chain${i}`), 4, (name) =>
        setup.signedInUser(urls.knock, adminToken, knock.app, name),
      );
      knock.grants = await Promise.all(knock.users.map((u) => setup.exchange(urls.knock, '/login/oauth/access_token', knock.app, u.firstCode)));
      log(`Knock: an OAuth application and ${knock.users.length} signed-in users with a grant each`);
    } catch (e) {
      knock.error = firstLine(e);
      log(`Knock OAuth set-up failed: ${knock.error}`);
    }
    const peer = {};
    try {
      peer.app = await setup.registerPeerClient(urls.peer);
      peer.grants = await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, i) => setup.exchange(urls.peer, '/token', peer.app, await setup.peerCode(urls.peer, peer.app, `chain${i}`))),
      );
      log(`peer: a registered client and ${peer.grants.length} grants`);
    } catch (e) {
      peer.error = firstLine(e);
      log(`peer set-up failed: ${peer.error}`);
    }
    const owner = {};
    try {
      owner.id = need(knock.users, `no users: ${knock.error}`) && (await call(`${urls.knock}/api/v4/users?username=chain0`, { token: adminToken, expect: 200 })).json[0].id;
      owner.token = await setup.impersonationToken(urls.knock, adminToken, owner.id);
      owner.projects = {};
      for (const n of SCALE) owner.projects[n] = await setup.createProject(urls.knock, owner.token, `pending-${n}`);
      owner.cycleProject = await setup.createProject(urls.knock, owner.token, 'cycle');
      const t0 = Date.now();
      await setup.seedPending(urls.seeder, owner.id, Object.fromEntries(SCALE.map((n) => [owner.projects[n], n])), {
        onProgress: (done, total) => done % 25000 === 0 && log(`  seeded ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} requesters`),
      });
      log(`seeded ${Math.max(...SCALE).toLocaleString('en-US')} users and ${SCALE.reduce((a, b) => a + b, 0).toLocaleString('en-US')} pending requests in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      owner.error = firstLine(e);
      log(`projects / seeding failed: ${owner.error}`);
    }
    const listUrl = (n) => `${urls.knock}/api/v4/projects/${owner.projects[n]}/access_requests?per_page=20`;
    const listed = SCALE.find((n) => n >= 20) ?? SCALE[0];
    byId.get('list').label += `, ${listed.toLocaleString('en-US')} pending`;

    // ---- baselines, the API call, the peer's — interleaved
    log('baselines, GET /api/v4/user, peer API call');
    const kvTarget = { url: `${urls.baseline}/kv` };
    const g1 = [
      { id: 'baseline_json', target: { url: `${urls.baseline}/json` } },
      { id: 'baseline_kv', target: kvTarget },
      {
        id: 'api_user',
        target: await prepared('api_user', async () => {
          const token = need(knock.grants?.[0]?.access_token, `no OAuth token: ${knock.error}`);
          await probe(`${urls.knock}/api/v4/user`, { headers: bearer(token) }, 200);
          await countRoundTrips('api_user', [{ path: '/api/v4/user', init: { headers: bearer(token) }, expect: 200 }]);
          return { url: `${urls.knock}/api/v4/user`, headers: bearer(token) };
        }),
      },
      {
        id: 'peer_api',
        target: await prepared('peer_api', async () => {
          const token = need(peer.grants?.[0]?.access_token, `peer set-up failed: ${peer.error}`);
          await probe(`${urls.peer}/api/user`, { headers: bearer(token) }, 200);
          return { url: `${urls.peer}/api/user`, headers: bearer(token) };
        }),
      },
    ];
    const m1 = await measureGroup(g1, { onMember: record });
    if (byId.get('api_user').available) byId.get('api_user').baselineRps = m1.baseline_kv.rps;

    // ---- the list, beside the KV baseline. A group of its own: its garbage would otherwise be
    // collected during the API call's slices (same isolate), and the baselines' would not.
    log('list, KV baseline');
    const g1b = [
      { id: 'baseline_kv_list', target: kvTarget },
      { id: 'baseline_do', target: { url: `${urls.baseline}/do` } },
      {
        id: 'list',
        target: await prepared('list', async () => {
          need(owner.projects?.[listed], `projects not available: ${owner.error}`);
          const page = JSON.parse(await probe(listUrl(listed), { headers: bearer(owner.token) }, 200));
          if (page.length !== Math.min(20, listed)) throw new Error(`list returned ${page.length} requests`);
          await countRoundTrips('list', [{ path: new URL(listUrl(listed)).pathname + '?per_page=20', init: { headers: bearer(owner.token) }, expect: 200 }], { warm: true });
          byId.get('list').note = 'round trips counted with the isolate\'s registry cache warm, as during the run (first call in an isolate: + Directory 1)';
          return { url: listUrl(listed), headers: bearer(owner.token) };
        }),
      },
    ];
    const m1b = await measureGroup(g1b, { onMember: (id, m) => id !== 'baseline_kv_list' && record(id, m) });
    if (byId.get('list').available) Object.assign(byId.get('list'), { baselineRps: m1b.baseline_kv_list.rps, baselineDoRps: m1b.baseline_do.rps });

    // ---- request + approve: each cycle, a fresh user asks and the owner approves
    log('request + approve cycles');
    const cycleTarget = await prepared('cycle', async () => {
      need(owner.cycleProject, `projects not available: ${owner.error}`);
      const pool = await setup.seedUsers(urls.seeder, 'cycle', 0, CYCLES + WARM_POOL + SLACK, { tokens: true });
      const base = `/api/v4/projects/${owner.cycleProject}/access_requests`;
      const first = pool.pop();
      await probe(`${urls.knock}${base}`, { method: 'POST', headers: bearer(first.token) }, 201);
      await probe(`${urls.knock}${base}/${first.id}/approve`, { method: 'PUT', headers: bearer(owner.token) }, 201);
      const second = pool.pop();
      await countRoundTrips('cycle', [
        { path: base, init: { method: 'POST', headers: bearer(second.token) }, expect: 201 },
        { path: `${base}/${second.id}/approve`, init: { method: 'PUT', headers: bearer(owner.token) }, expect: 201 },
      ]);
      const none = { id: 0, token: 'exhausted' };
      return {
        url: urls.knock,
        requests: [
          { method: 'POST', path: base, setupRequest: (req, ctx) => ((ctx.user = take(pool, none)), { ...req, headers: bearer(ctx.user.token) }) },
          { method: 'PUT', path: base, setupRequest: (req, ctx) => ({ ...req, path: `${base}/${ctx.user.id}/approve`, headers: bearer(owner.token) }) },
        ],
      };
    });
    if (cycleTarget) {
      const m = await measureAmount(cycleTarget, { amount: 2 * CYCLES, warmupAmount: 2 * WARM_POOL, companion: kvTarget });
      record('cycle', { ...m, rps: m.rps / 2, baselineRps: m.companion.rps });
    }

    // ---- approve with webhooks attached and without; how fast one project's object delivers
    log(`approve, with ${HOOKS} webhooks and without; webhook deliveries`);
    const receiver = await startReceiver();
    /** A project of the owner's with `pending` seeded requests, then `hooks` webhooks to the receiver under `/name/`. */
    const hookedProject = async (name, pending, hooks) => {
      const projectId = await setup.createProject(urls.knock, owner.token, name);
      const users = await setup.seedUsers(urls.seeder, name, 0, pending);
      await setup.seedAccessRequests(urls.seeder, projectId, owner.id, users.map((u) => u.id));
      // Hooks after the requests: they get the approvals' events, not the requests'.
      const hookIds = [];
      for (let i = 0; i < hooks; i++) {
        const { json } = await call(`${urls.knock}/api/v4/projects/${projectId}/hooks`, { method: 'POST', token: owner.token, body: { url: `${receiver.url}/${name}/${i}` }, expect: 201 });
        hookIds.push(json.id);
      }
      return { projectId, pool: users.map((u) => u.id), hookIds, approvePath: (id) => `/api/v4/projects/${projectId}/access_requests/${id}/approve` };
    };
    /** Waits until `count` deliveries under `/name/` succeeded (or three minutes passed). */
    const deliveredUnder = async (name, count) => {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const arrived = await receiver.delivered(name);
        if (arrived.length >= count || Date.now() > deadline) return arrived;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      const approveTargets = await prepared('approve', async () => {
        need(owner.token, `owner not available: ${owner.error}`);
        // Two measurements (steady and saturated), each with its warm-up.
        const pending = 2 * (APPROVALS + WARM_POOL) + 3 * SLACK;
        const target = async (name, hooks) => {
          const p = await hookedProject(name, pending, hooks);
          await probe(`${urls.knock}${p.approvePath(p.pool.pop())}`, { method: 'PUT', headers: bearer(owner.token) }, 201);
          return { ...p, target: { url: urls.knock, method: 'PUT', headers: bearer(owner.token), requests: [{ setupRequest: (req) => ({ ...req, path: p.approvePath(take(p.pool, 0)) }) }] } };
        };
        return { plain: await target('approve-plain', 0), hooked: await target('approve-hooks', HOOKS) };
      });
      if (approveTargets) {
        // The hooked project's deliveries are done before the next chunk, so they land on neither.
        const hookedApprovals = async () => {
          const members = await call(`${urls.knock}/api/v4/projects/${approveTargets.hooked.projectId}/members?per_page=1`, { token: owner.token, expect: 200 });
          return Number(members.headers.get('x-total')) - 1;
        };
        const drained = async () => void (await deliveredUnder('approve-hooks', HOOKS * (await hookedApprovals())));
        // Six rounds rather than three: at a steady rate each chunk takes seconds, and the machine's
        // drift is averaged over more alternations.
        const steady = await measurePair(approveTargets.plain.target, approveTargets.hooked.target, {
          amount: APPROVALS,
          warmupAmount: WARM_POOL,
          rate: APPROVE_RATE,
          rounds: 2 * ROUNDS,
          between: drained,
        });
        record('approve', steady.a);
        record('approve_hooks', steady.b);
        const saturated = await measurePair(approveTargets.plain.target, approveTargets.hooked.target, { amount: APPROVALS, warmupAmount: WARM_POOL, between: drained });
        results.webhooksSaturated = { plainRps: saturated.a.rps, hookedRps: saturated.b.rps, plainP50: saturated.a.p50, hookedP50: saturated.b.p50 };
        log(`  saturated: approve ${saturated.a.rps.toFixed(0)} req/s (p50 ${saturated.a.p50.toFixed(1)} ms) without webhooks, ${saturated.b.rps.toFixed(0)} req/s (p50 ${saturated.b.p50.toFixed(1)} ms) with ${HOOKS}`);
      }

      // Deliveries per second from one project's object: a backlog builds while the receiver
      // refuses (the hooks fail and rest), then the receiver comes back, the hooks are edited
      // (which makes what waited due at once), and the backlog is timed until it is drained.
      const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 400);
      need(owner.token, `owner not available: ${owner.error}`);
      const drain = await hookedProject('drain', BACKLOG, HOOKS);
      await receiver.fail(['drain']);
      await setup.inPool(drain.pool, CONNECTIONS, (id) => call(`${urls.knock}${drain.approvePath(id)}`, { method: 'PUT', token: owner.token, expect: 201 }));
      await receiver.fail([]);
      const t0 = performance.timeOrigin + performance.now();
      for (const hookId of drain.hookIds) {
        await call(`${urls.knock}/api/v4/projects/${drain.projectId}/hooks/${hookId}`, { method: 'PUT', token: owner.token, body: { name: 'back up' }, expect: 200 });
      }
      const expected = HOOKS * BACKLOG;
      const arrived = await deliveredUnder('drain', expected);
      const seconds = (arrived[arrived.length - 1] - t0) / 1000;
      results.webhooks = { available: arrived.length >= expected, reason: arrived.length >= expected ? undefined : `only ${arrived.length} of ${expected} delivered`, hooks: HOOKS, backlog: expected, delivered: arrived.length, seconds, perSecond: arrived.length / seconds };
      log(`  webhooks: a backlog of ${expected} deliveries (${HOOKS} hooks) drained in ${seconds.toFixed(1)} s: ${results.webhooks.perSecond.toFixed(0)} deliveries/s`);
    } catch (e) {
      results.webhooks = { available: false, reason: firstLine(e) };
    } finally {
      await receiver.close();
    }

    // ---- code exchange: codes minted beforehand through the remembered-consent redirect (302)
    log('code exchange');
    const exchangeTarget = await prepared('code_exchange', async () => {
      need(knock.users, `no OAuth set-up: ${knock.error}`);
      const total = CODES + WARM_POOL + SLACK;
      const codes = await setup.inPool(Array.from({ length: total }, (_, i) => knock.users[i % knock.users.length]), CONNECTIONS, (u) => setup.nextCode(u, knock.app));
      byId.get('code_exchange').note = `${total} codes minted first, over ${knock.users.length} users`;
      const exchangeOnce = { method: 'POST', headers: FORM, body: form(setup.exchangeForm(knock.app, codes.pop())) };
      await countRoundTrips('code_exchange', [{ path: '/login/oauth/access_token', init: exchangeOnce, expect: 200 }]);
      return {
        url: `${urls.knock}/login/oauth/access_token`,
        method: 'POST',
        headers: FORM,
        requests: [{ setupRequest: (req) => ({ ...req, body: form(setup.exchangeForm(knock.app, take(codes, 'knock_ac_1_exhausted0000000000'))) }) }],
      };
    });
    if (exchangeTarget) {
      const m = await measureAmount(exchangeTarget, { amount: CODES, warmupAmount: WARM_POOL, companion: kvTarget });
      record('code_exchange', { ...m, baselineRps: m.companion.rps });
    }

    // ---- refresh, ours and the peer's, with the KV baseline — interleaved
    log('refresh, peer refresh, KV baseline');
    const chains = (origin, path, app, grants) => refreshChains(`${origin}${path}`, app, grants.map((g) => g.refresh_token));
    const g2 = [
      {
        id: 'refresh',
        target: await prepared('refresh', async () => {
          const grants = need(knock.grants, `no OAuth set-up: ${knock.error}`);
          const spare = await setup.exchange(urls.knock, '/login/oauth/access_token', knock.app, await setup.nextCode(knock.users[0], knock.app));
          const refreshOnce = { method: 'POST', headers: FORM, body: form(setup.refreshForm(knock.app, spare.refresh_token)) };
          await countRoundTrips('refresh', [{ path: '/login/oauth/access_token', init: refreshOnce, expect: 200 }]);
          return chains(urls.knock, '/login/oauth/access_token', knock.app, grants);
        }),
      },
      { id: 'peer_refresh', target: await prepared('peer_refresh', async () => chains(urls.peer, '/token', peer.app, need(peer.grants, `peer set-up failed: ${peer.error}`))) },
      { id: 'baseline_kv_2', target: kvTarget },
      { id: 'baseline_rotate', target: rotationFloor(urls.baseline, CONNECTIONS) },
    ];
    const m2 = await measureGroup(g2, { onMember: (id, m) => !id.startsWith('baseline_') && record(id, m) });
    if (byId.get('refresh').available) byId.get('refresh').baselineRps = m2.baseline_kv_2.rps;
    results.rotationFloorRps = m2.baseline_rotate.rps;
    byId.get('refresh').note = 'one chain per connection: each request sends the token the previous answer returned';

    // ---- scale: the same list with 10, 10,000 and 100,000 pending requests in one project
    log('scale: list latency by pending requests');
    try {
      need(owner.projects, `projects not available: ${owner.error}`);
      const m3 = await measureGroup(
        SCALE.map((n) => ({ id: String(n), target: { url: listUrl(n), headers: bearer(owner.token) } })),
        { onMember: (id, m) => log(`  ${Number(id).toLocaleString('en-US')} pending: p50 ${m.p50.toFixed(2)} ms, ${m.rps.toFixed(0)} req/s`) },
      );
      const points = SCALE.map((n) => ({ pending: n, ...m3[String(n)] }));
      for (const p of points) p.ratio = p.p50 / points[0].p50;
      const last = points[points.length - 1];
      results.scale = { available: true, points, ratio: last.ratio, goal: { op: '<=', target: 1.5, verdict: verdict(last.ratio, '<=', 1.5) } };
    } catch (e) {
      results.scale = { available: false, reason: firstLine(e) };
    }
  }

  // ---- the owners' inbox
  if (runs('inbox')) await inboxScenarios(urls, adminToken);

  // ---- OpenID Connect (issue 24)
  if (runs('oidc')) {
    try {
      results.oidc = await oidcScenarios({ urls, adminToken, codes: CODES, warm: WARM_POOL, log });
    } catch (e) {
      results.oidc = { available: false, reason: firstLine(e) };
      log(`  OpenID Connect scenarios failed: ${results.oidc.reason}`);
    }
  }

  if (runs('rules')) {
    try {
      results.rules = await ruleScenarios({ urls, cycles: Number(process.env.BENCH_RULE_CYCLES ?? 300), warm: WARM_POOL, log });
    } catch (e) {
      results.rules = { available: false, reason: firstLine(e) };
      log(`  access request rule scenarios failed: ${results.rules.reason}`);
    }
  }

  // ---- past one object: runtimes of their own, so the shared one stops first
  if (runs('partitions')) {
    await runtime.dispose();
    runtime = null;
    results.partitions = { available: true, ...(await partitionScenarios({ knock: knockBundle, seeder: seederBundle, counted: countedBundle }, log)) };
  }
} catch (e) {
  log(`bench failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  await runtime?.dispose().catch(() => {});
  rmSync(work, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}

// ---- popup size
if (results.popup.reason === 'not run' && runs('core')) {
  const size = popupSize();
  results.popup = size
    ? { available: true, ...size, goal: { op: '<=', target: 30000, verdict: verdict(size.bytes, '<=', 30000) } }
    : { available: false, reason: 'no extension/.output/chrome-mv3/popup.html (the extension build did not run)' };
}

// ---- ratios and goals
const GOALS = { api_user: { baseline: 0.9, peer: 1.0 }, list: { baseline: 0.5 }, refresh: { peer: 1.5 } };
for (const s of results.scenarios) {
  if (!s.available) continue;
  if (s.baseline && s.baselineRps) {
    s.baselineShort = 'KV';
    s.ratioToBaseline = s.rps / s.baselineRps;
    const target = GOALS[s.id]?.baseline;
    if (target) s.goalBaseline = { op: '>=', target, verdict: verdict(s.ratioToBaseline, '>=', target) };
  }
  if (s.peer) {
    const p = byId.get(s.peer);
    s.ratioToPeer = p?.available ? s.rps / p.rps : NaN;
    const target = GOALS[s.id]?.peer;
    if (target) s.goalPeer = { op: '>=', target, verdict: verdict(s.ratioToPeer, '>=', target) };
  }
}
/** A goal line; `cause` (a function, called only when NOT MET) says what the figures show. */
const goal = (figure, value, op, target, cause) => {
  const v = verdict(value ?? NaN, op, target);
  results.goals.push({ figure, value: value ?? NaN, op, target, verdict: v, ...(v === 'NOT MET' && cause ? { cause: cause() } : {}) });
};
if (runs('core')) {
  const list = byId.get('list');
  goal('API call ÷ KV baseline (req/s)', byId.get('api_user').ratioToBaseline, '>=', 0.9);
  goal('Access-request list ÷ KV baseline (req/s)', list.ratioToBaseline, '>=', 0.5);
  goal('Access-request list ÷ KV + empty DO call baseline (req/s)', list.available && list.baselineDoRps ? list.rps / list.baselineDoRps : NaN, '>=', 0.8);
  goal('API call ÷ peer API call (req/s)', byId.get('api_user').ratioToPeer, '>=', 1.0);
  goal('Refresh ÷ peer refresh (req/s)', byId.get('refresh').ratioToPeer, '>=', 1.5, () => {
    const floor = results.rotationFloorRps / byId.get('peer_refresh').rps;
    return `in the same group the baselines' floor of a rotation (one object call that writes two rows and two KV records, as a refresh writes the new access token and the old one's tombstone; no crypto, no checks) ran at ${floor.toFixed(2)}× the peer${floor < 1.5 ? ': below the goal itself, so no rotation that writes two KV records meets it here (docs/performance.md)' : ''}`;
  });
  goal(`List p50, ${SCALE.at(-1).toLocaleString('en-US')} ÷ ${SCALE[0].toLocaleString('en-US')} pending`, results.scale.available ? results.scale.ratio : NaN, '<=', 1.5);
  goal('Popup JS gzipped ÷ 30 kB', results.popup.available ? results.popup.bytes / 30000 : NaN, '<=', 1.0);
  const [approve, approveHooks] = [byId.get('approve'), byId.get('approve_hooks')];
  goal(`Approve p50, ${HOOKS} webhooks ÷ none`, approve.available && approveHooks.available ? approveHooks.p50 / approve.p50 : NaN, '<=', 1.1);
}
if (runs('inbox')) {
  const ib = results.inbox;
  const r = ib.available ? ib.ratios : {};
  const trips = (id) => {
    const t = byId.get(id)?.roundTrips;
    return t ? `${t.kv.length} KV + ${t.do.length} DO (${t.do.join(', ') || 'none'})` : 'not counted';
  };
  const ms = (v) => `${v.toFixed(2)} ms`;
  goal('Inbox p50 ÷ one project list p50', r.inboxToList, '<=', 2.0, () =>
    `inbox ${ms(ib.p50.inbox)} with ${trips('inbox')}, list ${ms(ib.p50.list)} with ${trips('inbox_list')}: the inbox returns 10 requests joined with their sources and requesters, the list 1`,
  );
  goal(`Old way (4 + N requests) ÷ inbox, poll p50, ${(ib.sources ?? 0).toLocaleString('en-US')} sources`, r.oldWayToInbox, '>=', 50, () =>
    `the old way took ${ib.polls.old.requests} requests per poll (${ms(ib.polls.old.p50)}), the inbox 1 (${ms(ib.polls.inbox.p50)})`,
  );
  goal('304 poll p50 ÷ GET /api/v4/user p50', r.notModifiedToUser, '<=', 1.2, () =>
    `the 304 poll makes ${trips('inbox_304')}, GET /api/v4/user ${trips('inbox_user')}: the OAuth token and the inbox version are judged by the caller's User, one Durable Object call in place of the KV read /user makes; in the same group the baselines' KV read took ${ms(ib.p50.baselineKv)}, an empty object call beside it ${ms(ib.p50.baselineDo)} (${r.emptyCallToKv.toFixed(2)}×)`,
  );
  goal(`Inbox p50, ${(INBOX_SCALE.at(-1)).toLocaleString('en-US')} ÷ ${INBOX_SCALE[0].toLocaleString('en-US')} managed projects`, r.largeToSmall, '<=', 1.5, () =>
    `p50 ${ms(ib.scale.p50Small)} → ${ms(ib.scale.p50Large)} with ${trips(`inbox_${INBOX_SCALE[0]}`)} and ${trips(`inbox_${INBOX_SCALE.at(-1)}`)}`,
  );
}
if (runs('partitions')) {
  const pt = results.partitions;
  const mixed = pt.mixed?.available ? pt.mixed : null;
  const scale = pt.scale?.available ? pt.scale : null;
  goal(`Busiest object's share of calls ≤ 2 / ${PARTITIONS} partitions`, mixed?.busiest.share, '<=', 2 / PARTITIONS, () =>
    `${mixed.busiest.object} took ${mixed.busiest.calls} of ${mixed.totalCalls} calls (${Object.entries(mixed.busiest.methods).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([m, n]) => `${m} ${n}`).join(', ')})`,
  );
  goal(`Worst p50, ${(scale?.usersLarge ?? 1e6).toLocaleString('en-US')} ÷ ${(scale?.usersSmall ?? 1e3).toLocaleString('en-US')} users`, scale?.worst.ratio, '<=', 1.5, () =>
    `${scale.worst.op}: ${scale.worst.p50Large.toFixed(2)} ms against ${scale.worst.p50Small.toFixed(2)} ms`,
  );
}
if (runs('oidc')) {
  const r = results.oidc.available ? results.oidc.ratios : {};
  goal('Discovery ÷ hello baseline (req/s)', r.discoveryToHello, '>=', 0.9);
  goal('JWKS ÷ hello baseline (req/s)', r.jwksToHello, '>=', 0.9);
  goal('/oauth/userinfo p50 ÷ GET /api/v4/user p50', r.userinfoToUser, '<=', 1.2);
  goal('Code exchange p50, with openid ÷ without', r.exchangeOpenidToPlain, '<=', 1.2);
}
if (runs('rules')) {
  const r = results.rules.available ? results.rules.ratios : {};
  goal('Request + approve p50 per call, group with rules ÷ without', r.ruledToPlain, '<=', 1.15);
  goal('Auto-approved request p50 ÷ plain request p50', r.autoToPlain, '<=', 1.2);
}
results.totalSeconds = Math.round((Date.now() - started) / 1000);

// ---- output
const header = `Knock bench — ${results.machine.cpus} CPUs, ${CONNECTIONS} connections, ${DURATION_S} s per scenario (${ROUNDS} interleaved rounds) after ${WARMUP_S} s warm-up. Ratios compare req/s measured side by side.`;
const table = renderTable(results);
console.log(`\n${header}\n\n${table}\n`);
for (const g of results.goals) {
  console.log(`  goal: ${g.figure.padEnd(52)} ${Number.isFinite(g.value) ? g.value.toFixed(2) : ' n/a'}  (${g.op === '>=' ? '≥' : '≤'} ${g.target})  ${g.verdict}`);
  if (g.cause) console.log(`        cause: ${g.cause}`);
}
const partOnly = ONLY.length === 1 && ['partitions', 'oidc'].includes(ONLY[0]) ? ONLY[0] : null;
console.log(`\nTotal ${results.totalSeconds} s. Wrote bench/results.json${partOnly ? ` (its ${partOnly} part)` : ' and docs/bench.svg'}.`);
results.table = `${header}\n\n${table}`;
if (partOnly) {
  // A partitions-only or oidc-only run replaces only its own part of the last full run's results.
  const resultsFile = join(BENCH, 'results.json');
  const previous = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
  const mine = new Set(results.goals.map((g) => g.figure));
  const merged = { ...previous, [partOnly]: results[partOnly], [`${partOnly}Run`]: { generatedAt: results.generatedAt, machine: results.machine, totalSeconds: results.totalSeconds } };
  const stale = partOnly === 'partitions' ? /^Busiest object|^Worst p50/ : /^Discovery|^JWKS|^\/oauth\/userinfo|^Code exchange p50, with openid/;
  merged.goals = [...(previous.goals ?? []).filter((g) => !mine.has(g.figure) && !stale.test(g.figure)), ...results.goals];
  writeFileSync(resultsFile, JSON.stringify(merged, null, 2) + '\n');
} else {
  writeFileSync(join(BENCH, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  mkdirSync(join(ROOT, 'docs'), { recursive: true });
  writeFileSync(join(ROOT, 'docs', 'bench.svg'), renderSvg(results));
}
