// The crash test's load on the objects (test/scripts/crash-restart.test.ts): virtual users that sign
// up, get a token, ask for access to a group or a project, and are approved (at 10–40), denied,
// withdraw, or are blocked while they wait; one of them also creates groups. What the client saw
// acknowledged is remembered, and `verify` checks after each restart that all of it is there and
// nothing is half-written; `verifyCaughtUp` checks at the end that the indexes kept by outboxes
// (memberships, the owner's inbox) caught up.
import { expect } from 'vitest';
import { inParallel, type apiClient } from './crash-server';

type Api = ReturnType<typeof apiClient>;
type State = 'none' | 'pending' | 'member';
/** One user's story on one group or project, as the client saw it. */
interface Story {
  ns: string;
  userId: number;
  username: string;
  /** The state after the last acknowledged write. */
  acked: State;
  ackedLevel?: number;
  /** A write sent but never answered (the server died): it may or may not have happened. */
  inFlight?: { to: State; level?: number };
  /** The user was blocked (acknowledged), or a block was sent and never answered. */
  blocked?: 'acked' | 'in flight';
}

const VIRTUAL_USERS = 8;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Makes the stage (an owner with a group and a project in it); answers the load and its checks. */
export async function objectWorkload(api: Api, adminToken: string) {
  const owner = await api('POST', '/users', adminToken, { username: 'owner', name: 'Owner', password: 'owner-password' });
  expect(owner.status).toBe(201);
  const ownerToken = (await api('POST', `/users/${owner.body.id}/impersonation_tokens`, adminToken, { name: 'owner', scopes: ['api'] })).body.token;
  const group = await api('POST', '/groups', ownerToken, { name: 'Crash', path: 'crash', visibility: 'public' });
  expect(group.status).toBe(201);
  const project = await api('POST', '/projects', ownerToken, { name: 'Site', path: 'site', namespace_id: group.body.id, visibility: 'public' });
  expect(project.status).toBe(201);
  const spaces = [`/groups/${group.body.id}`, `/projects/${project.body.id}`];

  const ackedUsers = new Map<string, string | null>(); // username → token (null until one is acknowledged)
  const ackedGroups: string[] = [];
  const stories: Story[] = [];
  const counts = { acknowledged: 0, inFlightAtKills: 0 };
  let serial = 0;

  /** One virtual user: signs up, gets a token, asks for access, is approved or denied; again. */
  const virtualUser = async (v: number, alive: () => boolean) => {
    while (alive()) {
      const n = serial++;
      const username = `c${v}x${n}`;
      let step = 'create';
      let story: Story | null = null;
      try {
        const created = await api('POST', '/users', adminToken, { username, name: username, password: `pw-${username}-long` });
        expect(created.status).toBe(201);
        ackedUsers.set(username, null);
        counts.acknowledged++;
        step = 'token';
        const token = await api('POST', `/users/${created.body.id}/impersonation_tokens`, adminToken, { name: 't', scopes: ['api'] });
        expect(token.status).toBe(201);
        ackedUsers.set(username, token.body.token);
        counts.acknowledged++;
        const ns = spaces[n % 2]!;
        story = { ns, userId: created.body.id, username, acked: 'none' };
        stories.push(story);
        story.inFlight = { to: 'pending' };
        const requested = await api('POST', `${ns}/access_requests`, token.body.token);
        expect(requested.status).toBe(201);
        Object.assign(story, { acked: 'pending', inFlight: undefined });
        counts.acknowledged++;
        if (n % 8 === 1) {
          // Blocked by the administrator while the request waits: the request goes with the token.
          step = 'block';
          Object.assign(story, { blocked: 'in flight', inFlight: { to: 'none' } });
          const blocked = await api('POST', `/users/${created.body.id}/block`, adminToken);
          expect(blocked.status).toBe(201);
          Object.assign(story, { blocked: 'acked', acked: 'none', inFlight: undefined });
          counts.acknowledged++;
        } else if (n % 4 === 0) {
          // Denied by the owner, or withdrawn by the requester.
          story.inFlight = { to: 'none' };
          const denied = await api('DELETE', `${ns}/access_requests/${created.body.id}`, n % 8 === 0 ? token.body.token : ownerToken);
          expect(denied.status).toBe(204);
          Object.assign(story, { acked: 'none', inFlight: undefined });
          counts.acknowledged++;
        } else if (n % 4 !== 1) {
          const level = [10, 20, 30, 40][n % 4];
          story.inFlight = { to: 'member', level };
          const approved = await api('PUT', `${ns}/access_requests/${created.body.id}/approve?access_level=${level}`, n % 3 ? ownerToken : adminToken);
          expect(approved.status).toBe(201);
          Object.assign(story, { acked: 'member', ackedLevel: level, inFlight: undefined });
          counts.acknowledged++;
        }
        if (v === 0) {
          step = 'group';
          const path = `g${n}`;
          const made = await api('POST', '/groups', ownerToken, { name: path, path, visibility: 'private' });
          expect(made.status).toBe(201);
          ackedGroups.push(path);
          counts.acknowledged++;
        }
      } catch (e) {
        if (alive()) throw new Error(`${step} for ${username} failed while the server was up: ${e}`);
        counts.inFlightAtKills++;
        return;
      }
    }
  };

  /** Every page of a list of up to 100 a page. */
  const everyPage = async <T>(path: string): Promise<T[]> => {
    const all: T[] = [];
    for (let page = 1; ; page++) {
      const res = await api('GET', `${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`, adminToken);
      all.push(...(res.body as T[]));
      if (res.body.length < 100) return all;
    }
  };

  /** Every acknowledged write is there, and nothing half-written; what is there is what the next cycle builds on. */
  const verify = async () => {
    const blockedUsers = new Set<string>();
    await inParallel(stories.filter((st) => st.blocked), 8, async (story) => {
      const { state } = (await api('GET', `/users/${story.userId}`, adminToken)).body as { state: string };
      if (story.blocked === 'acked') expect(state, `${story.username} was blocked`).toBe('blocked');
      if (state !== 'blocked') {
        story.blocked = undefined;
        return;
      }
      // A block that committed ends the token at once, or (its fan-out cut short by the kill)
      // when the Directory's alarm finishes it after the restart.
      const token = ackedUsers.get(story.username);
      const finished = async () => {
        if (token && (await api('GET', '/user', token)).status !== 401) return false;
        const waiting = (await api('GET', `${story.ns}/access_requests?per_page=100`, adminToken)).body as { id: number }[];
        return !waiting.some((r) => r.id === story.userId);
      };
      const deadline = Date.now() + 30_000;
      while (!(await finished())) {
        expect(Date.now() < deadline, `blocked ${story.username} still has a working token or a pending request`).toBe(true);
        await pause(250);
      }
      story.blocked = 'acked';
      blockedUsers.add(story.username);
    });
    await inParallel([...ackedUsers], 8, async ([username, token]) => {
      const found = await api('GET', `/users?username=${username}`, adminToken);
      expect(found.body, `user ${username}`).toEqual([expect.objectContaining({ username })]);
      if (token && !blockedUsers.has(username)) expect((await api('GET', '/user', token)).body, `token of ${username}`).toMatchObject({ username });
    });
    await inParallel(ackedGroups, 8, async (path) => {
      expect((await api('GET', `/groups/${path}`, ownerToken)).status, `group ${path}`).toBe(200);
    });
    for (const ns of spaces) {
      const members = new Map((await everyPage<{ id: number; access_level: number }>(`${ns}/members`)).map((m) => [m.id, m.access_level]));
      const pending = new Set<number>();
      for (const r of await everyPage<{ id: number }>(`${ns}/access_requests`)) {
        expect(pending.has(r.id), `duplicate request of ${r.id} on ${ns}`).toBe(false);
        pending.add(r.id);
      }
      for (const id of pending) expect(members.has(id), `user ${id} is both member and requester of ${ns}`).toBe(false);
      const all = new Map((await everyPage<{ id: number; access_level: number }>(`${ns}/members/all`)).map((m) => [m.id, m.access_level]));
      for (const [id, level] of members) expect(all.get(id), `member ${id} of ${ns} in members/all`).toBeGreaterThanOrEqual(level);
      const told = new Map(stories.filter((s) => s.ns === ns).map((s) => [s.userId, s]));
      for (const [id] of members) if (id !== owner.body.id) expect(told.has(id), `member ${id} of ${ns} nobody approved`).toBe(true);
      for (const s of told.values()) {
        const now: State = members.has(s.userId) ? 'member' : pending.has(s.userId) ? 'pending' : 'none';
        if (s.blocked === 'acked') expect(now, `blocked ${s.username} still waits on ${ns}`).toBe('none');
        const allowed = [s.acked, ...(s.inFlight ? [s.inFlight.to] : [])];
        expect(allowed, `${s.username} on ${ns} is ${now}`).toContain(now);
        if (now === 'member') expect([s.ackedLevel, s.inFlight?.level]).toContain(members.get(s.userId));
        Object.assign(s, { acked: now, ackedLevel: members.get(s.userId), inFlight: undefined });
      }
    }
  };

  /**
   * The per-user membership index (pushed from each group's or project's object, with an outbox
   * and an alarm for what a crash interrupted) catches up: members see what they joined; and the
   * owners' inbox, kept by the same outbox, holds exactly the requests of both lists.
   */
  const verifyCaughtUp = async () => {
    const deadline = Date.now() + 30_000;
    await inParallel(stories.filter((st) => st.acked === 'member'), 8, async (s) => {
      const token = ackedUsers.get(s.username)!;
      const [, kind, id] = s.ns.split('/');
      for (;;) {
        const mine = (await api('GET', `/${kind}?min_access_level=10&per_page=100`, token)).body as { id: number }[];
        if (mine.some((x) => x.id === Number(id))) break;
        expect(Date.now() < deadline, `${s.username} does not see ${s.ns} in /${kind}?min_access_level=10`).toBe(true);
        await pause(250);
      }
    });
    const listed = async () => {
      const keys: string[] = [];
      for (const ns of spaces) for (const r of (await api('GET', `${ns}/access_requests?per_page=100`, ownerToken)).body as { id: number }[]) keys.push(`${ns}:${r.id}`);
      return keys.sort();
    };
    const inboxed = async () => {
      const items = (await api('GET', '/access_requests?per_page=100', ownerToken)).body as { source_type: string; source_id: number; id: number }[];
      return items.map((i) => `/${i.source_type === 'Namespace' ? 'groups' : 'projects'}/${i.source_id}:${i.id}`).sort();
    };
    for (const inboxDeadline = Date.now() + 30_000; ; ) {
      const [inbox, lists] = await Promise.all([inboxed(), listed()]);
      if (JSON.stringify(inbox) === JSON.stringify(lists)) break;
      expect(Date.now() < inboxDeadline, `the owner's inbox ${JSON.stringify(inbox)} is not the lists' ${JSON.stringify(lists)}`).toBe(true);
      await pause(250);
    }
  };

  return {
    /** The virtual users, until `alive` says the server is being killed. */
    load: (alive: () => boolean) => Promise.all(Array.from({ length: VIRTUAL_USERS }, (_, v) => virtualUser(v, alive))),
    verify,
    verifyCaughtUp,
    counts,
    someoneJoined: () => stories.some((s) => s.acked === 'member'),
  };
}
