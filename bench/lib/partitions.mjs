// `BENCH_ONLY=partitions`: past one object (issue 16).
//
// 1. One object's ceiling on this machine: calls/s to a trivial method of one object (the
//    seeder's BenchEcho), and sign-ins/s through one object (what a sign-in asks of the object that
//    keeps sign-in state), and what that projects for a deployment.
// 2. Calls per object for a mixed workload (sign-in, page view, code exchange, refresh, list,
//    request, approve) on Knock counted (bench/counted: the product's app and classes, every object
//    call recorded by class and object name, including the calls objects make to each other), on
//    state of its own: the busiest object's share against 2 / partitions.
// 3. Latency at 1,000 and 1,000,000 users: two states, each with the few users, projects and
//    tokens the run touches made through the API, and the rest of the users written straight into
//    the SQLite files of the objects that keep them (SEEDS below), so that the tables the
//    operations read are as large as that many users make them. Each operation's p50 in both,
//    measured interleaved on the production bundle.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { call } from './http.mjs';
import * as setup from './setup.mjs';
import { freshStateDir, startKnockRuntime } from './runtime.mjs';

export const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 64);
const USERS_SMALL = Number(process.env.BENCH_USERS_SMALL ?? 1000);
const USERS_LARGE = Number(process.env.BENCH_USERS_LARGE ?? 1_000_000);
/** Requests per operation, state and round in the latency comparison. */
const SAMPLES = Number(process.env.BENCH_PARTITION_SAMPLES ?? 120);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 4;
/** A batch of one operation stops after this long (an operation that grows slow with users would take hours). */
const BATCH_MS = Number(process.env.BENCH_PARTITION_BATCH_SECONDS ?? 20) * 1000;
/** Operations of the mixed workload whose object calls are counted. */
const MIXED_OPS = Number(process.env.BENCH_MIXED_OPS ?? 2000);
const SYNTHETIC = 'synthetic';

const ms = (v) => `${v.toFixed(2)} ms`;
const p50 = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : NaN;
};
/** A deterministic pseudo-random sequence (mulberry32), so every run does the same workload. */
const random = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

// ---------------------------------------------------------------- bulk seeding

/**
 * What a deployment with N users keeps, per object, beyond the users the run touches: each entry
 * names a binding, which object (by name) keeps a synthetic user's rows, and the rows. Synthetic
 * user n (1 ≤ n ≤ N) is `synthetic<n>` with id `u.id`; one in ten owns a group with a project
 * (`u.groupId`, `u.projectId`) whose next nine users are members, or (one of them) waits for
 * access. `u.namePartition` and `u.idPartition` are the partitions of the username and the id, as
 * Knock computes them. When state moves out of the Directory, add its objects here (as `SIGN_IN`
 * below) and drop the moved rows from the Directory's entry: each object then holds what a
 * deployment of N users gives it.
 */
const SEEDS = [
  {
    binding: 'DIRECTORY',
    object: () => 'directory',
    rows: (u) => {
      const at = '2026-01-01T00:00:00.000Z';
      const owner = u.n - (u.n % 10); // the owner of the group this user belongs to (0: none)
      const rows = [
        [
          `INSERT INTO users (id, username, name, email, password_hash, admin, state, created_at, version) VALUES (?, ?, ?, ?, 'pbkdf2-sha256$1$x$y', 0, 'active', ?, 1)`,
          u.id, u.username, `Synthetic User ${u.n}`, `${u.username}@bench.invalid`, at,
        ],
        // Every user's personal namespace (the path registry shares names with groups).
        [
          `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at) VALUES (?, 'user', ?, ?, ?, ?, NULL, 'private', 0, '', ?, ?)`,
          u.namespaceId, u.username, u.username, u.username, u.username, u.id, at,
        ],
        [
          `INSERT INTO access_tokens (user_id, name, scopes, impersonation, token_hash, created_at, expires_at) VALUES (?, 'synthetic', '["api"]', 0, ?, ?, 4102444800)`,
          u.id, `synthetic-${u.n}`, at,
        ],
      ];
      if (owner === u.n) {
        const path = `synthetic-group-${u.n}`;
        rows.push(
          [
            `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at) VALUES (?, 'group', ?, ?, ?, ?, NULL, 'private', 1, '', ?, ?)`,
            u.groupId, path, path, path, path, u.id, at,
          ],
          [
            `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at) VALUES (?, 'project', 'app', 'app', ?, ?, ?, 'private', 1, '', ?, ?)`,
            u.projectId, `${path}/app`, `${path} / app`, u.groupId, u.id, at,
          ],
        );
      }
      // The registry rows' copies are written straight into the index partitions (below): the
      // triggers queued these rows for a push that is not needed.
      rows.push([`DELETE FROM registry_outbox`]);
      return rows;
    },
  },
  {
    // Sign-in: each user's login record in the partition of the username, the username throttle.
    binding: 'SIGN_IN',
    object: (u) => `name:${u.namePartition}`,
    rows: (u) => {
      const at = '2026-01-01T00:00:00.000Z';
      const user = { id: u.id, username: u.username, name: `Synthetic User ${u.n}`, email: `${u.username}@bench.invalid`, admin: false, state: 'active', created_at: at, version: 1, builtin: false, two_factor_enabled: false };
      const rows = [[`INSERT INTO logins (user_id, username, user, password_hash, version) VALUES (?, ?, ?, 'pbkdf2-sha256$1$x$y', 1)`, u.id, u.username, JSON.stringify(user)]];
      // One in a hundred failed to sign in recently.
      if (u.n % 100 === 0) rows.push([`INSERT INTO failures (key, at) VALUES (?, ?)`, u.username.toLowerCase(), Date.now()]);
      return rows;
    },
  },
  {
    // The membership, requester and inbox indexes of each synthetic group's tree, in the partition
    // of the tree's root (the group), with the copies of names they keep.
    binding: 'INDEX_PARTITIONS',
    object: (u) => `index:${treePartition(u)}`,
    every: () => Array.from({ length: PARTITIONS }, (_, p) => `index:${p}`),
    rows: (u) => {
      const at = '2026-01-01T00:00:00.000Z';
      const owner = u.n - (u.n % 10);
      if (owner === 0) return [];
      const group = u.groupId;
      const rows = [
        [`INSERT INTO users (id, username, name, state, version) VALUES (?, ?, ?, 'active', 1)`, u.id, u.username, `Synthetic User ${u.n}`],
        [`INSERT INTO known_users (user_id, registered) VALUES (?, 1)`, u.id],
      ];
      if (owner === u.n) {
        const path = `synthetic-group-${u.n}`;
        rows.push(
          [
            `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at, version) VALUES (?, 'group', ?, ?, ?, ?, NULL, 'private', 1, '', ?, ?, 1)`,
            group, path, path, path, path, u.id, at,
          ],
          [
            `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at, version) VALUES (?, 'project', 'app', 'app', ?, ?, ?, 'private', 1, '', ?, ?, 1)`,
            u.projectId, `${path}/app`, `${path} / app`, group, u.id, at,
          ],
          [`INSERT INTO memberships (user_id, namespace_id, access_level, created_at, created_by, version) VALUES (?, ?, 50, ?, ?, 1)`, u.id, group, at, u.id],
        );
      } else if (u.n % 10 === 5) {
        // Waiting for access to the group: the requester index, the request's scopes, the owner's
        // inbox row (Owner of the group, no expiry) and its version, as sent. The owners' `User`
        // objects are not seeded (one per synthetic owner, and no scenario reads their inbox).
        rows.push(
          [`INSERT INTO pending_requests (user_id, namespace_id, pending, version, requested_at) VALUES (?, ?, 1, 1, ?)`, u.id, group, at],
          [`INSERT INTO request_scopes (scope_id, namespace_id, user_id) VALUES (?, ?, ?)`, group, group, u.id],
          [`INSERT INTO inbox (manager_id, namespace_id, user_id, grants) VALUES (?, ?, ?, '[[50,null]]')`, u.id - 5, group, u.id],
          [`INSERT INTO inbox_versions (user_id, version, sent) VALUES (?, 1, 1)`, u.id - 5],
        );
      } else {
        // A member, approved some time ago.
        rows.push(
          [`INSERT INTO memberships (user_id, namespace_id, access_level, created_at, created_by, version) VALUES (?, ?, 30, ?, ?, 1)`, u.id, group, at, u.id - (u.n % 10)],
          [
            `INSERT INTO pending_requests (user_id, namespace_id, pending, version, requested_at, outcome, access_level, decided_by, decided_at) VALUES (?, ?, 0, 1, ?, 'approved', 30, ?, ?)`,
            u.id, group, at, u.id - (u.n % 10), at,
          ],
        );
      }
      return rows;
    },
  },
];

/** The index partition of the tree of a synthetic user's group (its group's id modulo the count). */
const treePartition = (u) => u.groupId % PARTITIONS;

/**
 * Synthetic user n of `count`: ids after `base` (users) and `nsBase` (namespaces). Each user has
 * three: `3n` their personal namespace, `3n + 1` the group they own (one in ten), `3n + 2` none
 * (the layout of the recorded runs, whose groups fall in every other partition). A group's project
 * takes an id above all of those in its group's partition, as Knock gives a project its tree's
 * partition (worker/durable/partitions.ts `idInTreeOf`).
 */
const syntheticUser = (n, count, base, nsBase, partitionsOfNames) => {
  const groupId = nsBase + 3 * (n - (n % 10)) + 1;
  return {
    n,
    id: base + n,
    username: `${SYNTHETIC}${n}`,
    namespaceId: nsBase + 3 * n,
    groupId,
    projectId: groupId + PARTITIONS * Math.ceil((3 * count + 3) / PARTITIONS),
    namePartition: partitionsOfNames[n - 1],
    idPartition: (base + n) % PARTITIONS,
  };
};

const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));

/** The SQLite file of a Knock object, by binding and name (the runtime must be stopped to write it). */
const objectFile = async (seeder, stateDir, binding, name) => {
  const { json } = await call(`${seeder}/object-id`, { method: 'POST', body: { binding, name }, expect: 200 });
  const file = files(stateDir).find((f) => f.endsWith(`${json.id}.sqlite`));
  if (!file) throw new Error(`no SQLite file for ${binding} ${name} (id ${json.id}): the object must have been called once before seeding`);
  return file;
};

/**
 * Writes `count` synthetic users into a stopped runtime's state: every SEEDS entry's rows, into the
 * object it names. `objects` maps `binding name` to its file (found while the runtime ran).
 */
const writeSynthetic = (objects, count, base, nsBase, partitionsOfNames) => {
  const open = new Map();
  const db = (binding, name) => {
    const key = `${binding} ${name}`;
    if (!open.has(key)) {
      const file = objects.get(key);
      if (!file) throw new Error(`no file for ${key}`);
      const handle = new DatabaseSync(file);
      handle.exec('BEGIN');
      open.set(key, { handle, statements: new Map() });
    }
    return open.get(key);
  };
  for (let n = 1; n <= count; n++) {
    const username = `${SYNTHETIC}${n}`;
    const u = syntheticUser(n, count, base, nsBase, partitionsOfNames);
    for (const seed of SEEDS) {
      const target = db(seed.binding, seed.object(u));
      for (const [sql, ...params] of seed.rows(u)) {
        let statement = target.statements.get(sql);
        if (!statement) target.statements.set(sql, (statement = target.handle.prepare(sql)));
        statement.run(...params);
      }
    }
  }
  for (const { handle } of open.values()) {
    handle.exec('COMMIT');
    handle.close();
  }
};

/** The partition of each synthetic username, as Knock computes it (asked of the seeder, in workerd). */
const namePartitions = async (seeder, count) => {
  const out = new Uint16Array(count);
  for (let from = 1; from <= count; from += 200_000) {
    const to = Math.min(count + 1, from + 200_000);
    const res = await fetch(`${seeder}/partitions-of`, { method: 'POST', body: JSON.stringify({ prefix: SYNTHETIC, from, to, count: PARTITIONS }) });
    if (!res.ok) throw new Error(`partitions-of: ${res.status} ${await res.text()}`);
    out.set(new Uint16Array(await res.arrayBuffer()), from - 1);
  }
  return out;
};

/**
 * A Knock state with `users` users: started once so its objects exist, stopped, the synthetic users
 * written into the objects' files, and started again (on new ports).
 */
async function stateWithUsers(bundles, users, log) {
  const dir = freshStateDir();
  let runtime = null;
  try {
    runtime = await startKnockRuntime({ knock: bundles.knock, seeder: bundles.seeder, persistTo: dir });
    const { secrets } = runtime;
    // One request creates the Directory (the deployment's partition count is recorded there).
    await call(`${runtime.urls.knock}/api/v4/users?per_page=1`, { token: secrets.adminToken, expect: 200 });
    const partitionsOfNames = await namePartitions(runtime.urls.seeder, users);
    // The objects the seeds name, found by sampling the users (every partition shows up).
    const names = new Set();
    for (let n = 1; n <= users; n += Math.max(1, Math.floor(users / 4096))) {
      const u = syntheticUser(n, users, 0, 0, partitionsOfNames);
      for (const seed of SEEDS) names.add(`${seed.binding} ${seed.object(u)}`);
    }
    for (const seed of SEEDS) for (const name of seed.every?.() ?? []) names.add(`${seed.binding} ${name}`);
    const objects = new Map();
    for (const key of names) {
      const [binding, name] = key.split(' ');
      objects.set(key, await objectFile(runtime.urls.seeder, dir, binding, name));
    }
    await runtime.dispose();
    runtime = null;
    const t0 = Date.now();
    const db = new DatabaseSync(objects.get('DIRECTORY directory'));
    const base = Number(db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM users').get().id);
    // Above every id used, also a deleted one (AUTOINCREMENT's sqlite_sequence, as Knock reads it).
    const nsBase = Number(db.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'namespaces'), 0) AS id").get().id);
    db.close();
    writeSynthetic(objects, users, base, nsBase, partitionsOfNames);
    log(`  ${users.toLocaleString('en-US')} users written into ${objects.size} object(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    runtime = await startKnockRuntime({ knock: bundles.knock, seeder: bundles.seeder, persistTo: dir, secrets });
    return { runtime, dir, partitionsOfNames };
  } catch (e) {
    await runtime?.dispose().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

// ---------------------------------------------------------------- what the operations need

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * The users, projects and tokens the operations touch, made through the API and the pages: an
 * OAuth application, `owners` owners each with a project, `signedIn` users signed in (a browser
 * each, consent given, a token pair), and requesters (made by the seeder, with tokens).
 */
async function touched(urls, adminToken, { owners, signedIn, requesters, prefix }) {
  const app = await setup.createApplication(urls.knock, adminToken);
  const ownerList = await setup.inPool(Array.from({ length: owners }, (_, i) => i), 4, async (i) => {
    const [user] = await setup.seedUsers(urls.seeder, `${prefix}owner`, i, 1, { tokens: true });
    const project = await setup.createProject(urls.knock, user.token, `${prefix}project${i}`);
    return { ...user, project };
  });
  const people = await setup.inPool(Array.from({ length: signedIn }, (_, i) => i), 4, async (i) => {
    const user = await setup.signedInUser(urls.knock, adminToken, app, `${prefix}person${i}`);
    const pair = await setup.exchange(urls.knock, '/login/oauth/access_token', app, user.firstCode);
    return { ...user, access: pair.access_token, refresh: pair.refresh_token };
  });
  const waiting = await setup.seedUsers(urls.seeder, `${prefix}requester`, 0, requesters, { tokens: true });
  // The pre-sign-in CSRF cookie and its token, reusable for any number of sign-in forms.
  const page = await fetch(`${urls.knock}/users/sign_in`);
  const csrfCookie = page.headers.getSetCookie().map((l) => l.split(';')[0]).find((c) => c.startsWith('knock_csrf='));
  const csrf = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrfCookie || !csrf) throw new Error('no pre-sign-in CSRF token on the sign-in page');
  return { app, owners: ownerList, people, waiting, csrf: { cookie: csrfCookie, token: csrf } };
}

const expectStatus = async (res, expected, what) => {
  await res.arrayBuffer();
  if (res.status !== expected) throw new Error(`${what} answered ${res.status}, expected ${expected}`);
};

/** The operations, each one request against `urls.knock`; `ctx.pick` chooses among the touched. */
const OPERATIONS = {
  sign_in: async (urls, t, pick) => {
    const person = pick(t.people);
    // People sign in from their own addresses (the edge sets CF-Connecting-IP): one documentation
    // address (RFC 5737) per person, so the address partitions share the load as they would.
    const address = `198.51.100.${t.people.indexOf(person) % 256}`;
    const res = await fetch(`${urls.knock}/users/sign_in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...FORM, cookie: t.csrf.cookie, origin: urls.knock, 'cf-connecting-ip': address },
      body: new URLSearchParams({ username: person.username, password: setup.PASSWORD, authenticity_token: t.csrf.token }).toString(),
    });
    await expectStatus(res, 303, 'sign-in');
  },
  page_view: async (urls, t, pick) => {
    const res = await fetch(`${urls.knock}/`, { headers: { cookie: pick(t.people).browser.cookieHeader }, redirect: 'manual' });
    await expectStatus(res, 200, 'the dashboard');
  },
  token_check: async (urls, t, pick) => {
    const res = await fetch(`${urls.knock}/api/v4/user`, { headers: { authorization: `Bearer ${pick(t.people).access}` } });
    await expectStatus(res, 200, 'GET /api/v4/user');
  },
  code_exchange: async (urls, t, pick) => {
    const person = pick(t.people);
    const code = person.codes?.pop() ?? (await setup.nextCode(person, t.app));
    const res = await fetch(`${urls.knock}/login/oauth/access_token`, { method: 'POST', headers: FORM, body: new URLSearchParams(setup.exchangeForm(t.app, code)).toString() });
    await expectStatus(res, 200, 'code exchange');
  },
  refresh: async (urls, t, pick) => {
    // A person's chain is used by one request at a time (`busy`), as a client rotates its token.
    const person = pick(t.people.filter((p) => !p.busy));
    person.busy = true;
    try {
      const res = await fetch(`${urls.knock}/login/oauth/access_token`, { method: 'POST', headers: FORM, body: new URLSearchParams(setup.refreshForm(t.app, person.refresh)).toString() });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`refresh answered ${res.status}: ${text.slice(0, 100)}`);
      const pair = JSON.parse(text);
      person.refresh = pair.refresh_token;
      person.access = pair.access_token;
    } finally {
      person.busy = false;
    }
  },
  list: async (urls, t, pick) => {
    const owner = pick(t.owners);
    const res = await fetch(`${urls.knock}/api/v4/projects/${owner.project}/access_requests?per_page=20`, { headers: { 'PRIVATE-TOKEN': owner.token } });
    await expectStatus(res, 200, 'the list');
  },
  request: async (urls, t, pick) => {
    const requester = t.waiting.pop();
    if (!requester) throw new Error('no requester left');
    const owner = pick(t.owners);
    const res = await fetch(`${urls.knock}/api/v4/projects/${owner.project}/access_requests`, { method: 'POST', headers: { 'PRIVATE-TOKEN': requester.token } });
    await expectStatus(res, 201, 'an access request');
    (owner.pending ??= []).push(requester.id);
  },
  approve: async (urls, t, pick) => {
    const owner = pick(t.owners.filter((o) => o.pending?.length));
    const userId = owner.pending.shift();
    const res = await fetch(`${urls.knock}/api/v4/projects/${owner.project}/access_requests/${userId}/approve?access_level=30`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': owner.token } });
    await expectStatus(res, 201, 'an approval');
  },
};

/** Codes minted ahead (not measured) so a code exchange is the exchange alone. */
const mintCodes = async (t, count, pick) => {
  await setup.inPool(Array.from({ length: count }, () => pick(t.people)), 4, async (person) => {
    (person.codes ??= []).push(await setup.nextCode(person, t.app));
  });
};

// ---------------------------------------------------------------- 1. one object's ceiling

async function ceiling(urls, log) {
  const run = async (kind, calls) => {
    const { json } = await call(`${urls.seeder}/ceiling`, { method: 'POST', body: { kind, calls, concurrency: 32 }, expect: 200 });
    return (json.calls / json.ms) * 1000;
  };
  await run('echo', 2000);
  const echo = await run('echo', 30_000);
  await run('sign-in', 500);
  const signIn = await run('sign-in', 6000);
  log(`  one object: ${echo.toFixed(0)} trivial calls/s, ${signIn.toFixed(0)} sign-ins/s (beginSignIn + signedIn in a SignIn name partition)`);
  return { echoPerSecond: echo, signInsPerSecond: signIn };
}

// ---------------------------------------------------------------- 2. calls per object

async function callsPerObject(bundles, log) {
  const dir = freshStateDir();
  const runtime = await startKnockRuntime({ knock: bundles.counted, seeder: bundles.seeder, persistTo: dir, counted: true });
  try {
    const { urls, adminToken } = runtime;
    const t = await touched(urls, adminToken, { owners: 128, signedIn: 192, requesters: MIXED_OPS, prefix: 'mix' });
    const rand = random(16);
    const pick = (list) => list[Math.floor(rand() * list.length)];
    // The mix: sign-in 15%, page view 20%, code exchange 10%, refresh 15%, list 15%, request 12.5%, approve 12.5%.
    const mix = [
      ['sign_in', 0.15], ['page_view', 0.2], ['code_exchange', 0.1], ['refresh', 0.15], ['list', 0.15], ['request', 0.125], ['approve', 0.125],
    ];
    const ops = Array.from({ length: MIXED_OPS }, () => {
      let r = rand();
      for (const [op, share] of mix) if ((r -= share) < 0) return op;
      return 'list';
    });
    await fetch(`${urls.knock}/__bench/calls`, { method: 'DELETE' });
    const done = {};
    // One at a time, in order, so every approval finds the request before it.
    for (const op of ops) {
      const chosen = op === 'approve' && !t.owners.some((o) => o.pending?.length) ? 'request' : op;
      await OPERATIONS[chosen](urls, t, pick);
      done[chosen] = (done[chosen] ?? 0) + 1;
    }
    // Outboxes and alarms finish after the answers: count until nothing more arrives for 2 s.
    let counts = {};
    let total = -1;
    for (let stable = 0, deadline = Date.now() + 60_000; stable < 4 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 500));
      counts = await (await fetch(`${urls.knock}/__bench/calls`)).json();
      const now = Object.values(counts).reduce((a, m) => a + Object.values(m).reduce((x, y) => x + y, 0), 0);
      stable = now === total ? stable + 1 : 0;
      total = now;
    }
    const objects = Object.entries(counts)
      .map(([key, methods]) => ({ object: key, calls: Object.values(methods).reduce((a, b) => a + b, 0), methods }))
      .sort((a, b) => b.calls - a.calls);
    const byClass = {};
    for (const o of objects) {
      const cls = o.object.split(' ')[0];
      byClass[cls] ??= { objects: 0, calls: 0 };
      byClass[cls].objects += 1;
      byClass[cls].calls += o.calls;
    }
    const busiest = objects[0];
    const share = busiest.calls / total;
    log(`  ${MIXED_OPS} operations (${Object.entries(done).map(([k, v]) => `${k} ${v}`).join(', ')}): ${total} object calls to ${objects.length} objects`);
    for (const o of objects.slice(0, 5)) log(`    ${o.object}: ${o.calls} (${((100 * o.calls) / total).toFixed(1)}%)`);
    return { operations: done, totalCalls: total, objects: objects.length, byClass, top: objects.slice(0, 10), busiest: { ...busiest, share } };
  } finally {
    await runtime.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- 3. latency at 1,000 and 1,000,000 users

const LATENCY_OPS = ['sign_in', 'page_view', 'token_check', 'code_exchange', 'refresh', 'list', 'request', 'approve'];

async function latencyByUsers(bundles, log) {
  const states = {};
  try {
    for (const [label, users] of [['small', USERS_SMALL], ['large', USERS_LARGE]]) {
      log(`  a state of ${users.toLocaleString('en-US')} users`);
      const s = await stateWithUsers(bundles, users, log);
      states[label] = s;
      const need = SAMPLES * ROUNDS + 8;
      s.touched = await touched(s.runtime.urls, s.runtime.adminToken, { owners: 16, signedIn: 24, requesters: need, prefix: 'lat' });
    }
    const latencies = Object.fromEntries(LATENCY_OPS.map((op) => [op, { small: [], large: [] }]));
    const rand = random(64);
    const pick = (list) => list[Math.floor(rand() * list.length)];
    for (let round = 0; round < ROUNDS; round++) {
      for (const op of LATENCY_OPS) {
        const order = (round + LATENCY_OPS.indexOf(op)) % 2 ? ['small', 'large'] : ['large', 'small'];
        for (const label of order) {
          const { runtime, touched: t } = states[label];
          if (op === 'code_exchange') await mintCodes(t, SAMPLES, pick);
          // A batch that grows slow with the state stops after BATCH_MS (with at least 8 answers).
          const batchStarted = performance.now();
          let answered = 0;
          await setup.inPool(Array.from({ length: SAMPLES }, (_, i) => i), CONCURRENCY, async () => {
            if (answered >= 8 && performance.now() - batchStarted > BATCH_MS) return;
            const started = performance.now();
            await OPERATIONS[op](runtime.urls, t, pick);
            latencies[op][label].push(performance.now() - started);
            answered++;
          });
        }
      }
      log(`  round ${round + 1} of ${ROUNDS} done`);
    }
    const ops = {};
    for (const op of LATENCY_OPS) {
      const small = p50(latencies[op].small);
      const large = p50(latencies[op].large);
      ops[op] = { p50Small: small, p50Large: large, ratio: large / small, samplesSmall: latencies[op].small.length, samplesLarge: latencies[op].large.length };
      log(`  ${op}: p50 ${ms(small)} at ${USERS_SMALL.toLocaleString('en-US')} users, ${ms(large)} at ${USERS_LARGE.toLocaleString('en-US')} (${(large / small).toFixed(2)}×; ${ops[op].samplesLarge} requests)`);
    }
    const worst = Object.entries(ops).sort((a, b) => b[1].ratio - a[1].ratio)[0];
    // How evenly the names spread: the largest partition's share of the synthetic usernames.
    const perPartition = new Array(PARTITIONS).fill(0);
    for (const p of states.large.partitionsOfNames) perPartition[p]++;
    const namesShare = Math.max(...perPartition) / states.large.partitionsOfNames.length;
    return { usersSmall: USERS_SMALL, usersLarge: USERS_LARGE, samples: SAMPLES * ROUNDS, ops, worst: { op: worst[0], ...worst[1] }, busiestNamePartitionShare: namesShare };
  } finally {
    for (const s of Object.values(states)) {
      await s.runtime.dispose().catch(() => {});
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
}

/** The partitions scenarios; each part that fails says why and the others still run. */
export async function partitionScenarios(bundles, log) {
  const out = { partitions: PARTITIONS };
  const part = async (name, work) => {
    try {
      out[name] = { available: true, ...(await work()) };
    } catch (e) {
      out[name] = { available: false, reason: String(e?.message ?? e).split('\n')[0].slice(0, 200) };
      log(`  ${name} not available: ${out[name].reason}`);
    }
  };
  log('partitions: one object\'s ceiling');
  await part('ceiling', async () => {
    const dir = freshStateDir();
    const runtime = await startKnockRuntime({ knock: bundles.knock, seeder: bundles.seeder, persistTo: dir });
    try {
      return await ceiling(runtime.urls, log);
    } finally {
      await runtime.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  log(`partitions: calls per object, a mixed workload of ${MIXED_OPS} operations on Knock counted`);
  await part('mixed', () => callsPerObject(bundles, log));
  log(`partitions: latency at ${USERS_SMALL.toLocaleString('en-US')} and ${USERS_LARGE.toLocaleString('en-US')} users`);
  await part('scale', () => latencyByUsers(bundles, log));
  if (out.ceiling.available) {
    // Sign-ins land on the object of the username's partition: the busiest takes its share of
    // them, so the design takes the ceiling divided by that share; one Directory takes the ceiling.
    const share = out.scale.available ? out.scale.busiestNamePartitionShare : 1 / PARTITIONS;
    out.projection = {
      oneDirectorySignInsPerSecond: out.ceiling.signInsPerSecond,
      busiestPartitionShare: share,
      partitionedSignInsPerSecond: out.ceiling.signInsPerSecond / share,
    };
  }
  return out;
}
