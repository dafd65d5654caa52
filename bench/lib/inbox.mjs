// The owners' inbox scenarios: owners seeded with many groups and projects and a few pending
// requests, the inbox against the extension's old way of polling (4 + N requests), and poll
// loops measured the same way for both.
import { call } from './http.mjs';
import { seedAccessRequests, seedUsers } from './setup.mjs';

const CHUNK = 1000;

/** Groups or projects owned by `ownerId` (in `parentId`, or a project in the owner's own namespace), through the seeder. */
async function seedNamespaces(seeder, kind, ownerId, parentId, paths) {
  const ids = [];
  for (let i = 0; i < paths.length; i += CHUNK) {
    const { json } = await call(`${seeder}/namespaces`, { method: 'POST', body: { kind, ownerId, parentId, paths: paths.slice(i, i + CHUNK) }, expect: 200 });
    ids.push(...json);
  }
  return ids;
}

/**
 * An owner with a token (`owner`, { id, token }, or one seeded), `groups` groups of `perGroup`
 * projects each and `flat` projects of their own, and one pending request from each of
 * `requesters`, spread evenly over all those sources.
 * Returns { id, token, sources: [{ kind, id }], pending: [{ kind, id }] }.
 */
export async function seedOwner(seeder, { prefix, groups = 0, perGroup = 0, flat = 0, requesters, owner: given }) {
  const owner = given ?? (await seedUsers(seeder, prefix, 0, 1, { tokens: true }))[0];
  const sources = [];
  const groupIds = await seedNamespaces(seeder, 'group', owner.id, null, Array.from({ length: groups }, (_, g) => `${prefix}-g${g}`));
  for (const [g, groupId] of groupIds.entries()) {
    sources.push({ kind: 'group', id: groupId });
    const projects = await seedNamespaces(seeder, 'project', owner.id, groupId, Array.from({ length: perGroup }, (_, p) => `${prefix}-g${g}-p${p}`));
    sources.push(...projects.map((id) => ({ kind: 'project', id })));
  }
  const own = await seedNamespaces(seeder, 'project', owner.id, null, Array.from({ length: flat }, (_, p) => `${prefix}-p${p}`));
  sources.push(...own.map((id) => ({ kind: 'project', id })));
  const pending = [];
  for (const [i, requester] of requesters.entries()) {
    // Spread evenly, shifted by one more each time, so a stride of whole groups still hits both kinds.
    const source = sources[(Math.floor((i * sources.length) / requesters.length) + i) % sources.length];
    await seedAccessRequests(seeder, source.id, owner.id, [requester.id], source.kind);
    pending.push(source);
  }
  return { id: owner.id, token: owner.token, sources, pending };
}

/**
 * One poll the way the extension did it before the inbox (extension/lib/pending-requests.ts):
 * the caller, their groups (Owner), projects (Maintainer+) and owned projects, every page of
 * 100, at once; then each group's and project's access requests, 4 at a time. Returns the
 * number of requests it took.
 */
export async function oldWayPoll(origin, token) {
  let requests = 0;
  const get = async (path) => {
    requests++;
    const res = await fetch(`${origin}/api/v4${path}`, { headers: { 'PRIVATE-TOKEN': token } });
    if (!res.ok) throw new Error(`${path} answered ${res.status}`);
    return res;
  };
  const all = async (path) => {
    const items = [];
    for (let page = 1; page; ) {
      const res = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`);
      items.push(...(await res.json()));
      page = Number(res.headers.get('x-next-page')) || 0;
    }
    return items;
  };
  const [, groups, projects] = await Promise.all([
    get('/user').then((r) => r.json()),
    all('/groups?min_access_level=50'),
    all('/projects?min_access_level=40'),
    all('/projects?min_access_level=50'),
  ]);
  const candidates = [...groups.map((g) => `/groups/${g.id}`), ...projects.map((p) => `/projects/${p.id}`)];
  let found = 0;
  for (let i = 0; i < candidates.length; i += 4) {
    const lists = await Promise.all(candidates.slice(i, i + 4).map((c) => all(`${c}/access_requests`)));
    found += lists.reduce((n, l) => n + l.length, 0);
  }
  return { requests, found };
}

/** One poll through the inbox: one request. */
export async function inboxPoll(origin, token) {
  const res = await fetch(`${origin}/api/v4/access_requests?per_page=100`, { headers: { 'PRIVATE-TOKEN': token } });
  if (!res.ok) throw new Error(`inbox answered ${res.status}`);
  return { requests: 1, found: (await res.json()).length };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Whole polls by one client, one after another, the members interleaved: each of `rounds` rounds
 * gives every member `seconds` (at least `minPolls` polls). Returns { id: { polls, p50, requests } }.
 */
export async function measurePolls(members, { rounds = 3, seconds = 2, minPolls = 1 } = {}) {
  const samples = Object.fromEntries(members.map((m) => [m.id, []]));
  const sizes = {};
  for (const m of members) await m.poll(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < members.length; i++) {
      const m = members[(i + r) % members.length];
      const until = performance.now() + seconds * 1000;
      for (let n = 0; n < minPolls || performance.now() < until; n++) {
        const t = performance.now();
        sizes[m.id] = await m.poll();
        samples[m.id].push(performance.now() - t);
      }
    }
  }
  return Object.fromEntries(
    members.map((m) => {
      const sorted = samples[m.id].sort((a, b) => a - b);
      return [m.id, { polls: sorted.length, p50: percentile(sorted, 50), requests: sizes[m.id].requests, found: sizes[m.id].found }];
    }),
  );
}
