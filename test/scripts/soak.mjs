// `npm run soak`: a bounded mixed workload against a local server this script starts itself, on
// fresh state in a temporary directory. A few hundred virtual users sign in through the pages and
// the OAuth flow, refresh their tokens, ask for access, approve and deny, and list, with think
// time between steps: a warm-up of SOAK_WARMUP_SECONDS (default 90: memory rises while every
// Durable Object and cache fills), then SOAK_SECONDS (default 60) measured. Every response is
// checked against the contract; the RSS of the workerd process is sampled from /proc. Exit code 1
// on any error outside GitLab's and OAuth 2.0's error shapes, or on memory still growing in the measured window.
//
// The server is the Worker bundle `wrangler deploy` would upload, run by workerd (Miniflare, no
// dev tooling), by default. SOAK_RUNTIME=wrangler runs `npm start`'s wrangler dev instead: its
// errors count the same, but its memory is not Knock's — wrangler dev's inspector and proxy grow
// by about 30 KB per request even for a hello-world Worker (see docs/testing.md).
//
//   npm run soak                        # 300 virtual users, 90 s warm-up + 60 s
//   SOAK_USERS=500 SOAK_SECONDS=300 npm run soak
//   SOAK_JSON=soak.json npm run soak    # also write the figures as JSON
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from 'miniflare';
import { ROOT, startServer } from '../../worker/dev/server.mjs';

const USERS = Number(process.env.SOAK_USERS) || 300;
const SECONDS = Number(process.env.SOAK_SECONDS) || 60;
/** Memory rises while every object and cache fills; the verdict is taken after this. */
const WARMUP = Number(process.env.SOAK_WARMUP_SECONDS ?? 90);
const OWNERS = Math.max(2, Math.round(USERS / 30));
const SAMPLE_MS = 2000;
const RUNTIME = process.env.SOAK_RUNTIME === 'wrangler' ? 'wrangler' : 'workerd';
const ADMIN_TOKEN = `soak_${randomBytes(18).toString('base64url')}`;
const REDIRECT_URI = 'https://soak.example/callback';

const log = (msg) => console.error(`[soak ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
const t0 = Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];

// ---- the API's response shapes (GitLab's and OAuth 2.0's error bodies) ----

const stats = { requests: 0, byOutcome: new Map(), errors: [], latencies: [] };
const count = (key) => stats.byOutcome.set(key, (stats.byOutcome.get(key) ?? 0) + 1);
const error = (what, detail) => {
  count(`ERROR ${what}`);
  if (stats.errors.length < 50) stats.errors.push(`${what}: ${detail}`);
};

const isContractError = (body) => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] === 'message') return typeof body.message === 'string' || (typeof body.message === 'object' && body.message !== null);
  return typeof body.error === 'string' && keys.every((k) => ['error', 'error_description', 'scope'].includes(k));
};

/**
 * Sends one request and checks it: `expected` lists the statuses that are part of the flow (e.g. a
 * 404 when another approver was first). Anything else, any 5xx, a network error, or an error
 * body outside those shapes is an error.
 */
const send = async (label, url, init, expected) => {
  const started = performance.now();
  stats.requests++;
  let res;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(30_000), ...init });
  } catch (e) {
    error(label, `network: ${e.cause?.code ?? e.message}`);
    return null;
  }
  const text = await res.text();
  stats.latencies.push(performance.now() - started);
  const type = res.headers.get('content-type') ?? '';
  if (!expected.includes(res.status)) {
    error(label, `${res.status} ${text.slice(0, 200)}`);
    return null;
  }
  if (res.status >= 400 && !type.startsWith('text/html')) {
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {}
    if (type !== 'application/json' || !isContractError(body)) {
      error(label, `not a contract error: ${res.status} ${type} ${text.slice(0, 200)}`);
      return null;
    }
  }
  count(`${label} ${res.status}`);
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
};

// ---- the server and its memory ----

const dir = mkdtempSync(join(tmpdir(), 'knock-soak-'));
const SECRETS = { ADMIN_TOKEN, TOKEN_HASH_KEY: randomBytes(24).toString('base64url') };

/** The Worker as deployed: wrangler's bundle, wrangler.toml's bindings, in one workerd process. */
const startWorkerd = async () => {
  const outdir = join(dir, 'bundle');
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0' },
  });
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
  const vars = Object.fromEntries([...toml.split('[vars]')[1].split(/\n\[/)[0].matchAll(/^([A-Z_]+)\s*=\s*"(.*)"$/gm)].map((m) => [m[1], m[2]]));
  const mf = new Miniflare(convertV4MiniflareOptions({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    log: new Log(LogLevel.WARN),
    resourcePersistencePath: join(dir, 'state'),
    workers: [
      {
        name: 'knock',
        modules: true,
        scriptPath: join(outdir, 'index.js'),
        modulesRoot: outdir,
        compatibilityDate: /compatibility_date\s*=\s*"([^"]+)"/.exec(toml)[1],
        compatibilityFlags: ['nodejs_compat'],
        durableObjects: {
          DIRECTORY: { className: 'Directory', useSQLite: true },
          USERS: { className: 'User', useSQLite: true },
          NAMESPACES: { className: 'Namespace', useSQLite: true },
          CLIENT_HOLDERS: { className: 'ClientHolders', useSQLite: true },
          AUDIT_LOG: { className: 'AuditLog', useSQLite: true },
        },
        kvNamespaces: { TOKENS: 'tokens' },
        bindings: { ...vars, ...SECRETS },
        unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
      },
    ],
  }));
  await mf.ready;
  const url = (await mf.unsafeGetDirectURL('knock')).origin;
  // Miniflare's workerd is a child of this process.
  return { url, owns: (fields) => Number(fields[1]) === process.pid, stop: () => mf.dispose() };
};

const startWrangler = async () => {
  const server = await startServer({ persistTo: join(dir, 'state'), vars: SECRETS });
  // wrangler dev runs in its own process group, workerd included.
  return { url: server.url, owns: (fields) => Number(fields[2]) === server.pid, stop: () => server.stop() };
};

log(`starting the server on ${RUNTIME} (state in ${dir})`);
const server = RUNTIME === 'wrangler' ? await startWrangler() : await startWorkerd();
const base = server.url;
log(`server at ${base}`);

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

// ---- the stage: users, owners, groups and projects, an OAuth application ----

const api = (label, token, method, path, body, expected) =>
  send(
    label,
    `${base}/api/v4${path}`,
    { method, headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined },
    expected,
  );

const inBatches = async (items, size, fn) => {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
};

log(`creating ${USERS} users and ${OWNERS} owners`);
const people = await inBatches(Array.from({ length: USERS + OWNERS }, (_, i) => i), 8, async (i) => {
  const username = `${i < OWNERS ? 'owner' : 'soak'}${i}`;
  const password = `pw-${username}-${randomBytes(6).toString('hex')}`;
  const res = await api('setup: create user', ADMIN_TOKEN, 'POST', '/users', { username, name: `Soak ${i}`, password }, [201]);
  if (!res) throw new Error(`setup failed: ${stats.errors.at(-1)}`);
  return { id: res.json().id, username, password };
});
const owners = people.slice(0, OWNERS);
const users = people.slice(OWNERS);

const appRes = await api('setup: application', ADMIN_TOKEN, 'POST', '/applications', { name: 'Soak client', redirect_uri: REDIRECT_URI, scopes: 'api read_api' }, [201]);
const app = appRes.json();

log('creating groups and projects');
const spaces = [];
for (const owner of owners) {
  const token = (await api('setup: owner token', ADMIN_TOKEN, 'POST', `/users/${owner.id}/impersonation_tokens`, { name: 'soak', scopes: ['api'] }, [201])).json().token;
  owner.token = token;
  const group = (await api('setup: group', token, 'POST', '/groups', { name: `G ${owner.username}`, path: `g-${owner.username}`, visibility: 'public' }, [201])).json();
  const sub = (await api('setup: subgroup', token, 'POST', '/groups', { name: 'Sub', path: 'sub', parent_id: group.id, visibility: 'public' }, [201])).json();
  spaces.push({ kind: 'groups', id: group.id, owner }, { kind: 'groups', id: sub.id, owner });
  for (const [name, parent] of [['web', group.id], ['api', sub.id]]) {
    const project = (await api('setup: project', token, 'POST', '/projects', { name, path: name, namespace_id: parent, visibility: 'public' }, [201])).json();
    spaces.push({ kind: 'projects', id: project.id, owner });
  }
}

// ---- one virtual user ----

const form = (fields) => new URLSearchParams(fields).toString();
const cookieJar = () => {
  const jar = new Map();
  return {
    header: () => [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
    keep: (headers) => {
      for (const line of headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        if (/max-age=0/i.test(line)) jar.delete(pair.slice(0, eq));
        else jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
    },
  };
};
const hiddenFields = (html) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&').replace(/&quot;/g, '"')]));

/** A user's sign-in: the sign-in page, the consent page, the code, the token pair. */
const signIn = async (user) => {
  const jar = cookieJar();
  const page = await send('sign-in page', `${base}/users/sign_in`, {}, [200]);
  if (!page) return null;
  jar.keep(page.headers);
  const signedIn = await send(
    'sign-in',
    `${base}/users/sign_in`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base, Cookie: jar.header() },
      body: form({ username: user.username, password: user.password, authenticity_token: hiddenFields(page.text).authenticity_token }),
    },
    [303],
  );
  if (!signedIn) return null;
  jar.keep(signedIn.headers);
  const state = randomBytes(8).toString('hex');
  const authorizeUrl = `${base}/login/oauth/authorize?${form({ client_id: app.application_id, redirect_uri: REDIRECT_URI, state, scope: 'api' })}`;
  const consent = await send('authorize', authorizeUrl, { headers: { Cookie: jar.header() } }, [200, 302]);
  if (!consent) return null;
  let redirect = consent;
  if (consent.status === 200) {
    const fields = hiddenFields(consent.text);
    redirect = await send(
      'consent',
      `${base}/login/oauth/authorize`,
      { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base, Cookie: jar.header() }, body: form({ ...fields, decision: 'authorize' }) },
      [303],
    );
    if (!redirect) return null;
  }
  const location = new URL(redirect.headers.get('location'));
  if (location.searchParams.get('state') !== state) return error('authorize', `state mismatch: ${location}`), null;
  const tokens = await send(
    'token exchange',
    `${base}/login/oauth/access_token`,
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_id: app.application_id, client_secret: app.secret, code: location.searchParams.get('code'), redirect_uri: REDIRECT_URI }) },
    [200],
  );
  return tokens ? tokens.json() : null;
};

const refresh = async (session) => {
  const res = await send(
    'token refresh',
    `${base}/login/oauth/access_token`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${app.application_id}:${app.secret}`).toString('base64')}` },
      body: form({ grant_type: 'refresh_token', refresh_token: session.refresh_token }),
    },
    [200],
  );
  return res ? res.json() : null;
};

let stopAt = Infinity; // set when the timed window starts

const virtualUser = async (user, index) => {
  // Stagger the sign-ins over the first 20 seconds.
  await sleep((index / USERS) * 20_000);
  let session = await signIn(user);
  if (!session) return;
  while (Date.now() < stopAt) {
    await sleep(300 + Math.random() * 1700);
    if (Date.now() >= stopAt) break;
    const token = session.access_token;
    const space = pick(spaces);
    const roll = Math.random();
    if (roll < 0.1) {
      const next = await refresh(session);
      if (next) session = next;
    } else if (roll < 0.35) {
      // 400: already requested; 403: already a member.
      await api('request access', token, 'POST', `/${space.kind}/${space.id}/access_requests`, null, [201, 400, 403]);
    } else if (roll < 0.4) {
      await api('withdraw', token, 'DELETE', `/${space.kind}/${space.id}/access_requests/${user.id}`, null, [204, 404]);
    } else if (roll < 0.55) {
      await api('list my groups', token, 'GET', `/groups?min_access_level=10&per_page=20`, null, [200]);
    } else if (roll < 0.7) {
      await api('list projects', token, 'GET', `/projects?membership=true`, null, [200]);
    } else if (roll < 0.85) {
      await api('list members', token, 'GET', `/${space.kind}/${space.id}/members/all?per_page=50`, null, [200]);
    } else {
      await api('who am I', token, 'GET', '/user', null, [200]);
    }
  }
};

/** An owner: lists the pending requests, approves most, denies some (404 if another was first). */
const approver = async (owner) => {
  const mine = spaces.filter((s) => s.owner === owner);
  while (Date.now() < stopAt) {
    await sleep(100 + Math.random() * 400);
    const space = pick(mine);
    const listed = await api('list requests', owner.token, 'GET', `/${space.kind}/${space.id}/access_requests?per_page=20&page=1`, null, [200]);
    if (!listed) continue;
    for (const r of listed.json().slice(0, 5)) {
      if (Math.random() < 0.25) await api('deny', owner.token, 'DELETE', `/${space.kind}/${space.id}/access_requests/${r.id}`, null, [204, 404]);
      else await api('approve', owner.token, 'PUT', `/${space.kind}/${space.id}/access_requests/${r.id}/approve?access_level=${pick([10, 20, 30, 40])}`, null, [201, 404]);
    }
  }
};

// ---- the run: a warm-up, then the measured window, with the same workload throughout ----

const setupRequests = stats.requests;
stats.byOutcome.clear();
stats.latencies.length = 0;
const runStart = Date.now();
const measuredStart = runStart + WARMUP * 1000;
stopAt = measuredStart + SECONDS * 1000;
let atMeasuredStart = null;
setTimeout(() => {
  atMeasuredStart = { requests: stats.requests, latencies: stats.latencies.length };
  log(`warm-up over: measuring for ${SECONDS} s`);
}, WARMUP * 1000);
log(`running ${USERS} virtual users and ${OWNERS} approvers: ${WARMUP} s warm-up, then ${SECONDS} s measured`);
const progress = setInterval(() => log(`${stats.requests - setupRequests} requests, ${stats.errors.length} errors, workerd RSS ${samples.at(-1)?.mib.toFixed(0)} MiB`), 10_000);
await Promise.all([...users.map(virtualUser), ...owners.map(approver)]);
clearInterval(progress);
clearInterval(sampler);
const end = Date.now();
await server.stop();
rmSync(dir, { recursive: true, force: true });

// ---- the figures ----

const elapsed = (end - measuredStart) / 1000;
const requests = stats.requests - atMeasuredStart.requests;
const totalRequests = stats.requests - setupRequests;
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
console.log(`  latency ms: p50 ${figures.latencyMs.p50}, p95 ${figures.latencyMs.p95}, p99 ${figures.latencyMs.p99}, max ${figures.latencyMs.max}`);
console.log(
  `  workerd RSS MiB: ${figures.memoryMiB.atStart} at start, ${figures.memoryMiB.afterWarmup} after warm-up → ${figures.memoryMiB.end} at the end ` +
    `(peak ${figures.memoryMiB.peak}, trend ${figures.memoryMiB.slopePerMinute} MiB/min): ${stable ? 'stable' : 'NOT stable'}`,
);
console.log('  outcomes (whole run):');
for (const [k, n] of Object.entries(outcomes)) console.log(`    ${String(n).padStart(7)}  ${k}`);
if (stats.errors.length) console.log(`  first errors:\n    ${stats.errors.slice(0, 10).join('\n    ')}`);
if (process.env.SOAK_JSON) writeFileSync(process.env.SOAK_JSON, `${JSON.stringify({ ...figures, memorySamples: samples }, null, 2)}\n`);
process.exit(errors === 0 && stable ? 0 : 1);
