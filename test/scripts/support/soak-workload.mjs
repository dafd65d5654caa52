// The soak's workload, shared by `npm run soak` (test/scripts/soak.mjs, long, with memory) and the
// system project's bounded run (test/scripts/soak.test.ts): virtual users sign in through the
// sign-in page and the OAuth flow (authorize, consent, code, token exchange), then with think time
// refresh their tokens, ask for access, withdraw, poll their own requests, list their groups,
// projects and members, and ask who they are; owners poll their inbox with its ETag (as the
// extension does) and approve most of what it lists, deny some.
//
// Every response is checked: a status outside the flow, a 5xx, a network error or an error body
// outside GitLab's and OAuth 2.0's shapes is an error. Every write the server acknowledged is
// remembered, and `verify` checks afterwards that none was lost: each approval is a member at its
// level, each request still open is pending, nothing else is; the owners' inboxes, the users' own
// requests and their membership lists say the same (they are kept by outboxes, so they are given
// a while to catch up); every user's latest access token works.
import { randomBytes } from 'node:crypto';
import { consentFields, csrfOf, rememberCookies } from './web-client.mjs';

const REDIRECT_URI = 'https://soak.example/callback';
const LEVELS = [10, 20, 30, 40];
/** How long the indexes kept by outboxes (inbox, own requests, memberships) get to catch up. */
const CATCH_UP_MS = 30_000;

/** mulberry32: the workload's choices from a seed, so that a run can be repeated. */
const random = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const form = (fields) => new URLSearchParams(fields).toString();
const routeOf = (sourceType) => (sourceType === 'Namespace' ? 'groups' : 'projects');

/** An error body in GitLab's (`{"message"}`) or OAuth 2.0's (`{"error", "error_description"}`) shape. */
const isContractError = (body) => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] === 'message') return typeof body.message === 'string' || (typeof body.message === 'object' && body.message !== null);
  return typeof body.error === 'string' && keys.every((k) => ['error', 'error_description', 'scope'].includes(k));
};

/**
 * @param {{ base: string, adminToken: string, users: number, owners?: number, prefix?: string, seed?: number,
 *   staggerMs?: number, log?: (msg: string) => void }} options
 */
export function createSoak({ base, adminToken, users: userCount, owners: ownerCount = Math.max(2, Math.round(userCount / 30)), prefix = 'soak', seed = 1, staggerMs = 20_000, log = () => {} }) {
  const stats = { requests: 0, byOutcome: new Map(), errors: [], latencies: [] };
  const count = (key) => stats.byOutcome.set(key, (stats.byOutcome.get(key) ?? 0) + 1);
  const error = (what, detail) => {
    count(`ERROR ${what}`);
    if (stats.errors.length < 50) stats.errors.push(`${what}: ${detail}`);
  };

  /**
   * Sends one request and checks it: `expected` lists the statuses that are part of the flow (e.g.
   * a 404 when another approver was first). Anything else is an error, and answers null.
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

  const headersFor = (token, body) => ({
    ...(token.startsWith('Bearer ') ? { Authorization: token } : { 'PRIVATE-TOKEN': token }),
    ...(body ? { 'Content-Type': 'application/json' } : {}),
  });
  const api = (label, token, method, path, body, expected, headers = {}) =>
    send(label, `${base}/api/v4${path}`, { method, headers: { ...headersFor(token, body), ...headers }, body: body ? JSON.stringify(body) : undefined }, expected);
  /** A setup call: anything but `expected` stops the run. */
  const must = async (label, token, method, path, body, expected = 201) => {
    const res = await api(`setup: ${label}`, token, method, path, body, [expected]);
    if (!res) throw new Error(`soak setup failed: ${stats.errors.at(-1)}`);
    return res.json();
  };
  /** Every page of a list (as the administrator, unless `token`). */
  const all = async (path, token = adminToken) => {
    const items = [];
    for (let page = 1; ; page++) {
      const res = await api('verify: list', token, 'GET', `${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`, null, [200]);
      if (!res) throw new Error(`could not list ${path}: ${stats.errors.at(-1)}`);
      items.push(...res.json());
      if (!res.headers.get('x-next-page')) return items;
    }
  };

  // ---- the stage ----

  const stage = { owners: [], users: [], spaces: [], app: null };
  /** What the server acknowledged, per user and group or project: `${route}/${id} ${userId}`. */
  const stories = new Map();
  const storyOf = (space, user) => {
    const key = `${space.route}/${space.id} ${user.id}`;
    let story = stories.get(key);
    if (!story) stories.set(key, (story = { space, user, requested: 0, ended: 0, approvedLevel: null, ends: new Set() }));
    return story;
  };
  /** An acknowledged end of a request: `approved` (at `level`), `denied` or `withdrawn`. */
  const ended = (space, user, how, level = null) => {
    const story = storyOf(space, user);
    story.ended++;
    if (how === 'approved') story.approvedLevel = level;
    else story.ends.add(how);
  };

  async function setUp() {
    log(`creating ${userCount} users and ${ownerCount} owners`);
    const people = [];
    for (let i = 0; i < userCount + ownerCount; i += 8) {
      const batch = Array.from({ length: Math.min(8, userCount + ownerCount - i) }, (_, j) => i + j);
      people.push(
        ...(await Promise.all(
          batch.map(async (n) => {
            const username = `${prefix}-${n < ownerCount ? 'owner' : 'user'}${n}`;
            const password = `pw-${username}-${randomBytes(6).toString('hex')}`;
            const { id } = await must('create user', adminToken, 'POST', '/users', { username, name: `Soak ${n}`, password });
            return { id, username, password, session: null };
          }),
        )),
      );
    }
    stage.owners = people.slice(0, ownerCount);
    stage.users = people.slice(ownerCount);
    stage.app = await must('application', adminToken, 'POST', '/applications', { name: `Soak client ${prefix}`, redirect_uri: REDIRECT_URI, scopes: 'api read_api' });

    log('creating groups and projects');
    for (const owner of stage.owners) {
      owner.token = (await must('owner token', adminToken, 'POST', `/users/${owner.id}/impersonation_tokens`, { name: 'soak', scopes: ['api'] })).token;
      owner.etag = null;
      const group = await must('group', owner.token, 'POST', '/groups', { name: `G ${owner.username}`, path: `g-${owner.username}`, visibility: 'public' });
      const sub = await must('subgroup', owner.token, 'POST', '/groups', { name: 'Sub', path: 'sub', parent_id: group.id, visibility: 'public' });
      stage.spaces.push({ route: 'groups', id: group.id, owner }, { route: 'groups', id: sub.id, owner });
      for (const [name, parent] of [['web', group.id], ['api', sub.id]]) {
        const project = await must('project', owner.token, 'POST', '/projects', { name, path: name, namespace_id: parent, visibility: 'public' });
        stage.spaces.push({ route: 'projects', id: project.id, owner });
      }
    }
  }

  // ---- one virtual user ----

  /** A user's sign-in: the sign-in page, the consent page, the code, the token pair. */
  const signIn = async (user) => {
    const jar = new Map();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const keep = (res) => res && (rememberCookies(jar, res), res);
    const page = keep(await send('sign-in page', `${base}/users/sign_in`, {}, [200]));
    if (!page) return null;
    const formPost = (fields) => ({ method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base, Cookie: cookie() }, body: form(fields) });
    const signedIn = keep(
      await send('sign-in', `${base}/users/sign_in`, formPost({ username: user.username, password: user.password, authenticity_token: csrfOf(page.text) }), [303]),
    );
    if (!signedIn) return null;
    const state = randomBytes(8).toString('hex');
    const { application_id: clientId, secret } = stage.app;
    const authorizeUrl = `${base}/login/oauth/authorize?${form({ client_id: clientId, redirect_uri: REDIRECT_URI, state, scope: 'api' })}`;
    const consent = keep(await send('authorize', authorizeUrl, { headers: { Cookie: cookie() } }, [200, 302]));
    if (!consent) return null;
    let redirect = consent;
    if (consent.status === 200) {
      redirect = await send('consent', `${base}/login/oauth/authorize`, formPost({ ...consentFields(consent.text), authenticity_token: csrfOf(consent.text), decision: 'authorize' }), [303]);
      if (!redirect) return null;
    }
    const location = new URL(redirect.headers.get('location'));
    if (location.searchParams.get('state') !== state) return error('authorize', `state mismatch: ${location}`), null;
    const tokens = await send(
      'token exchange',
      `${base}/login/oauth/access_token`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_id: clientId, client_secret: secret, code: location.searchParams.get('code'), redirect_uri: REDIRECT_URI }) },
      [200],
    );
    return tokens ? tokens.json() : null;
  };

  /** RFC 6749 §6, with HTTP Basic client authentication (§2.3.1). */
  const refresh = async (session) => {
    const { application_id: clientId, secret } = stage.app;
    const res = await send(
      'token refresh',
      `${base}/login/oauth/access_token`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
        body: form({ grant_type: 'refresh_token', refresh_token: session.refresh_token }),
      },
      [200],
    );
    return res ? res.json() : null;
  };

  /** The user withdraws their request (404 if an owner decided it first). */
  const withdraw = async (user, token, space) => {
    const res = await api('withdraw', token, 'DELETE', `/${space.route}/${space.id}/access_requests/${user.id}`, null, [204, 404]);
    if (res?.status === 204) ended(space, user, 'withdrawn');
  };

  const virtualUser = async (user, index, stopAt, next) => {
    await sleep((index / stage.users.length) * staggerMs);
    user.session = await signIn(user);
    if (!user.session) return;
    while (Date.now() < stopAt) {
      await sleep(300 + next() * 1700);
      if (Date.now() >= stopAt) break;
      const token = `Bearer ${user.session.access_token}`;
      const space = stage.spaces[Math.floor(next() * stage.spaces.length)];
      const path = `/${space.route}/${space.id}/access_requests`;
      const roll = next();
      if (roll < 0.1) {
        const session = await refresh(user.session);
        if (session) user.session = session;
      } else if (roll < 0.35) {
        // 400: already asked; 403: already a member (here or above); 429: more than the edge lets
        // one requester ask in a minute (docs/security.md), which a busy loop reaches.
        const res = await api('request access', token, 'POST', path, null, [201, 400, 403, 429]);
        if (res?.status === 201) storyOf(space, user).requested++;
        // Changed their mind at once, now and then.
        if (res?.status === 201 && next() < 0.2) await withdraw(user, token, space);
      } else if (roll < 0.4) {
        // One of their requests the server said it took.
        const open = [...stories.values()].filter((s) => s.user === user && s.requested > s.ended);
        const mine = open[Math.floor(next() * open.length)]?.space;
        if (mine) await withdraw(user, token, mine);
      } else if (roll < 0.6) {
        await api('own requests', token, 'GET', '/user/access_requests?per_page=100', null, [200]);
      } else if (roll < 0.7) {
        await api('list my groups', token, 'GET', '/groups?min_access_level=10&per_page=20', null, [200]);
      } else if (roll < 0.8) {
        await api('list projects', token, 'GET', '/projects?membership=true', null, [200]);
      } else if (roll < 0.9) {
        await api('list members', token, 'GET', `/${space.route}/${space.id}/members/all?per_page=50`, null, [200]);
      } else {
        await api('who am I', token, 'GET', '/user', null, [200]);
      }
    }
  };

  /** An owner: polls the inbox with its ETag; approves most of what it lists, denies every fourth (404 if the requester withdrew first). */
  const approver = async (owner, stopAt, next) => {
    let decisions = 0;
    while (Date.now() < stopAt) {
      await sleep(100 + next() * 400);
      const polled = await api('inbox', owner.token, 'GET', '/access_requests?per_page=20', null, [200, 304], owner.etag ? { 'If-None-Match': owner.etag } : {});
      if (!polled) continue;
      if (polled.status === 304) continue;
      owner.etag = polled.headers.get('etag');
      for (const item of polled.json().slice(0, 5)) {
        const space = stage.spaces.find((s) => s.route === routeOf(item.source_type) && s.id === item.source_id);
        const user = stage.users.find((u) => u.id === item.id);
        if (!space || !user) {
          error('inbox', `an item of no soak user or space: ${JSON.stringify(item).slice(0, 200)}`);
          continue;
        }
        const path = `/${space.route}/${space.id}/access_requests/${user.id}`;
        if (decisions++ % 4 === 3) {
          const res = await api('deny', owner.token, 'DELETE', path, null, [204, 404]);
          if (res?.status === 204) ended(space, user, 'denied');
        } else {
          const level = LEVELS[Math.floor(next() * LEVELS.length)];
          // A 400 when the requester was approved on a group above at a higher level meanwhile:
          // GitLab refuses a direct membership below an inherited one; the request stays pending.
          const res = await api('approve', owner.token, 'PUT', `${path}/approve?access_level=${level}`, null, [201, 400, 404]);
          if (res?.status === 201) ended(space, user, 'approved', level);
          if (res?.status === 400 && !/inherited membership/.test(res.text)) error('approve', `400 ${res.text.slice(0, 200)}`);
        }
      }
    }
  };

  /** The workload, until `stopAt` (ms since the epoch). */
  async function run(stopAt) {
    await Promise.all([
      ...stage.users.map((user, i) => virtualUser(user, i, stopAt, random(seed + 1 + i))),
      ...stage.owners.map((owner, i) => approver(owner, stopAt, random(seed + 1000 + i))),
    ]);
  }

  // ---- nothing acknowledged is lost ----

  /** What the acknowledged writes say one user's requests should be now, by `${route}/${id}`. */
  const expectedOf = (story) => {
    const open = story.requested - story.ended;
    if (story.approvedLevel !== null) return { state: 'member', level: story.approvedLevel, open };
    return { state: open === 1 ? 'pending' : 'none', open };
  };

  /** The problems found, each a sentence; none when every acknowledged write is there. */
  async function verify() {
    const problems = [];
    for (const space of stage.spaces) {
      const where = `${space.route}/${space.id}`;
      const members = new Map((await all(`/${where}/members`)).map((m) => [m.id, m.access_level]));
      const pending = new Set((await all(`/${where}/access_requests`)).map((r) => r.id));
      for (const user of stage.users) {
        const story = stories.get(`${where} ${user.id}`);
        const expected = story ? expectedOf(story) : { state: 'none', open: 0 };
        if (expected.open !== 0 && expected.open !== 1) problems.push(`${user.username} on ${where}: ${story.requested} requests acknowledged, ${story.ended} ends`);
        if (expected.state === 'member' && members.get(user.id) !== expected.level)
          problems.push(`${user.username} was approved on ${where} at ${expected.level}, and is ${members.has(user.id) ? `a member at ${members.get(user.id)}` : 'not a member'}`);
        if (expected.state !== 'member' && members.has(user.id)) problems.push(`${user.username} is a member of ${where}, and no approval of theirs was acknowledged`);
        if (pending.has(user.id) !== (expected.open === 1))
          problems.push(`${user.username} is ${pending.has(user.id) ? '' : 'not '}pending on ${where}, with ${expected.open} acknowledged request open`);
      }
      for (const id of pending) if (!stage.users.some((u) => u.id === id)) problems.push(`user ${id} is pending on ${where}, and never asked`);
    }
    for (const user of stage.users) {
      if (!user.session) continue;
      const me = await api('verify: who am I', `Bearer ${user.session.access_token}`, 'GET', '/user', null, [200]);
      if (me?.json().username !== user.username) problems.push(`${user.username}'s latest access token does not work`);
    }

    // The indexes kept by outboxes catch up: the owners' inboxes, the users' own requests, their memberships.
    const indexProblems = async () => {
      const found = [];
      for (const owner of stage.owners) {
        const inbox = (await all('/access_requests', owner.token)).map((i) => `${routeOf(i.source_type)}/${i.source_id} ${i.id}`).sort();
        const lists = [...stories.values()].filter((s) => s.space.owner === owner && expectedOf(s).open === 1).map((s) => `${s.space.route}/${s.space.id} ${s.user.id}`).sort();
        if (JSON.stringify(inbox) !== JSON.stringify(lists)) found.push(`${owner.username}'s inbox holds ${JSON.stringify(inbox)}, the lists ${JSON.stringify(lists)}`);
      }
      for (const user of stage.users) {
        if (!user.session) continue;
        const token = `Bearer ${user.session.access_token}`;
        const own = new Map((((await api('verify: own requests', token, 'GET', '/user/access_requests?per_page=100', null, [200]))?.json()) ?? []).map((r) => [`${routeOf(r.source_type)}/${r.source_id}`, r]));
        const joined = new Set();
        for (const route of ['groups', 'projects']) {
          for (const row of (await api('verify: memberships', token, 'GET', `/${route}?min_access_level=10&per_page=100`, null, [200]))?.json() ?? []) joined.add(`${route}/${row.id}`);
        }
        for (const story of [...stories.values()].filter((s) => s.user === user && s.requested > 0)) {
          const where = `${story.space.route}/${story.space.id}`;
          const expected = expectedOf(story);
          const status = own.get(where)?.status;
          const allowed = expected.open === 1 ? ['pending'] : expected.state === 'member' ? ['approved'] : [...story.ends];
          if (!allowed.includes(status)) found.push(`${user.username}'s own request for ${where} says ${status}, not ${allowed.join(' or ')}`);
          if (expected.state === 'member' && !joined.has(where)) found.push(`${user.username} does not find ${where} among their ${story.space.route}`);
        }
      }
      return found;
    };
    const deadline = Date.now() + CATCH_UP_MS;
    let behind = await indexProblems();
    while (behind.length > 0 && Date.now() < deadline) {
      await sleep(500);
      behind = await indexProblems();
    }
    return [...problems, ...behind];
  }

  /** Acknowledged writes, for the report. */
  const acknowledged = () => {
    const values = [...stories.values()];
    return {
      requests: values.reduce((n, s) => n + s.requested, 0),
      approvals: values.filter((s) => s.approvedLevel !== null).length,
      ends: values.reduce((n, s) => n + s.ended, 0),
    };
  };

  return { stats, stage, setUp, run, verify, acknowledged };
}
