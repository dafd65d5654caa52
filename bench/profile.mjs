// `node bench/profile.mjs [user|list|not-modified|version|discovery|jwks|refresh|exchange|exchange-openid|kv]`: where Knock's isolate spends its time under load
// (`kv`: the KV baseline's isolate answering `/kv`, the floor `user` is held to).
// Starts the same runtime as the bench with the V8 inspector on, drives one scenario for a few
// seconds with autocannon, samples the CPU profile of Knock's isolate (its Durable Objects run in
// it too) and prints the functions with the most samples, with their line of the bundle.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBenchWorker, buildKnock } from './lib/build.mjs';
import { freePort } from '../worker/dev/server.mjs';
import { refreshChains } from './lib/chains.mjs';
import { CONNECTIONS, measureGroup } from './lib/load.mjs';
import { freshStateDir, seedBaselineToken, startRuntime } from './lib/runtime.mjs';
import * as oidc from './lib/oidc.mjs';
import * as setup from './lib/setup.mjs';

const scenario = process.argv[2] ?? 'list';
const seconds = Number(process.env.PROFILE_SECONDS ?? 5);
const work = mkdtempSync(join(tmpdir(), 'knock-profile-'));
const state = freshStateDir();
const inspectorPort = await freePort();
const bundle = await buildKnock(join(work, 'knock'));
const build = (dir) => buildBenchWorker(`bench/${dir}/worker.ts`, join(work, `${dir}.mjs`));
const runtime = await startRuntime({
  knock: bundle, baseline: await build('baselines'), peer: await build('peer'), seeder: await build('seeder'), counter: await build('counter'),
  persistTo: state, inspectorPort,
});
try {
  const { urls } = runtime;
  const users = await setup.seedUsers(urls.seeder, 'profile', 0, 41, { tokens: true });
  const headers = { authorization: `Bearer ${users[0].token}` };
  let path = { user: '/api/v4/user', version: '/api/v4/version', discovery: '/.well-known/openid-configuration', jwks: '/oauth/discovery/keys' }[scenario];
  let target = null;
  if (scenario === 'refresh') {
    // The bench's refresh chains: one per connection, each sending its previous answer's token.
    const app = await setup.createApplication(urls.knock, runtime.adminToken);
    const users = await setup.inPool(Array.from({ length: CONNECTIONS }, (_, i) => `chain${i}`), 4, (name) => setup.signedInUser(urls.knock, runtime.adminToken, app, name));
    const queue = (await Promise.all(users.map((u) => setup.exchange(urls.knock, '/login/oauth/access_token', app, u.firstCode)))).map((g) => g.refresh_token);
    path = '/login/oauth/access_token';
    target = refreshChains(`${urls.knock}${path}`, app, queue);
  }
  if (scenario === 'exchange' || scenario === 'exchange-openid') {
    // Code exchanges of the oidc scenarios (bench/lib/oidc.mjs), without or with `openid`.
    const app = await oidc.application(urls.knock, runtime.adminToken, scenario === 'exchange' ? 'api' : oidc.OPENID);
    const people = await setup.inPool(Array.from({ length: CONNECTIONS }, (_, i) => `px${i}`), 4, (name) => oidc.user(urls.knock, runtime.adminToken, [app], name));
    const codes = await setup.inPool(Array.from({ length: Number(process.env.PROFILE_CODES ?? 3000) }, (_, i) => people[i % people.length]), CONNECTIONS, (u) => oidc.nextCode(u, app));
    path = '/oauth/token';
    target = {
      url: `${urls.knock}${path}`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      requests: [{ setupRequest: (req) => ({ ...req, body: oidc.exchangeForm(app, codes.pop() ?? 'knock_ac_1_exhausted0000000000') }) }],
    };
  }
  if (scenario === 'list') {
    const project = await setup.createProject(urls.knock, users[0].token, 'profiled');
    await setup.seedAccessRequests(urls.seeder, project, users[0].id, users.slice(1).map((u) => u.id));
    path = `/api/v4/projects/${project}/access_requests?per_page=20`;
  }
  if (scenario === 'not-modified') {
    // The inbox poll answered 304, with an OAuth access token as the extension polls: the ETag of
    // the caller's first answer sent back in If-None-Match.
    const app = await setup.createApplication(urls.knock, runtime.adminToken);
    headers.authorization = `Bearer ${(await setup.oauthUser(urls.knock, runtime.adminToken, app, 'poller')).token}`;
    path = '/api/v4/access_requests';
    const first = await fetch(`${urls.knock}${path}`, { headers });
    await first.arrayBuffer();
    headers['if-none-match'] = first.headers.get('etag');
  }
  if (scenario === 'kv') {
    await seedBaselineToken(runtime.mf);
    path = '/kv';
  }
  if (!path) throw new Error(`unknown scenario ${scenario} (user, list, not-modified, version, discovery, jwks, refresh, exchange, exchange-openid, kv)`);

  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const worker = scenario === 'kv' ? 'baseline' : 'knock';
  const inspected = targets.find((t) => new RegExp(`core:user:${worker}\\b`).test(t.title));
  const ws = new WebSocket(inspected.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve);
    ws.addEventListener('error', reject);
  });
  let nextId = 0;
  const waiting = new Map();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(e.data);
    waiting.get(m.id)?.(m.result);
    waiting.delete(m.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });

  target ??= { url: `${urls[worker]}${path}`, headers };
  const load = (duration) => measureGroup([{ id: scenario, target }], { duration, rounds: 1, warmup: 0 });
  await load(1);
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 100 });
  await send('Profiler.start');
  const measured = (await load(seconds))[scenario];
  const { profile } = await send('Profiler.stop');
  ws.close();

  const lines = readFileSync(worker === 'knock' ? bundle : join(work, 'baselines.mjs'), 'utf8').split('\n');
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfSamples = new Map();
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const key = url ? `${functionName || '(anonymous)'} @ ${lines[lineNumber]?.trim().slice(0, 90)}` : functionName || '(native)';
    selfSamples.set(key, (selfSamples.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length;
  // PROFILE_WITHIN=signIdToken,groupClaimsOf: the share of samples with that function on the stack.
  const parents = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
  const within = new Map((process.env.PROFILE_WITHIN ?? '').split(',').filter(Boolean).map((name) => [name, 0]));
  for (const id of profile.samples) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parents.get(at)) seen.add(nodes.get(at).callFrame.functionName);
    for (const name of within.keys()) if (seen.has(name)) within.set(name, within.get(name) + 1);
  }
  // PROFILE_CALLERS=exec,toArray: for samples in that function, which function called it.
  const callers = new Map((process.env.PROFILE_CALLERS ?? '').split(',').filter(Boolean).map((name) => [name, new Map()]));
  for (const id of profile.samples) {
    const leaf = nodes.get(id).callFrame;
    const byCaller = callers.get(leaf.functionName);
    if (!byCaller) continue;
    const parent = nodes.get(parents.get(id))?.callFrame;
    const key = parent ? `${parent.functionName || '(anonymous)'} @ ${lines[parent.lineNumber]?.trim().slice(0, 80)}` : '(none)';
    byCaller.set(key, (byCaller.get(key) ?? 0) + 1);
  }
  console.log(`${scenario}: ${target.method ?? 'GET'} ${path} — ${measured.rps.toFixed(0)} req/s, p50 ${measured.p50.toFixed(2)} ms; ${total} samples of Knock's isolate`);
  for (const [name, n] of within) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  with ${name} on the stack`);
  for (const [name, byCaller] of callers) {
    for (const [key, n] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name} called by ${key}`);
  }
  for (const [key, n] of [...selfSamples].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 30))) {
    console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${key}`);
  }
} finally {
  await runtime.dispose();
  rmSync(work, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
