// Crash and restart: the real local server (`npm start`'s wrangler dev and workerd) is killed with
// SIGKILL — its whole process group — in the middle of a stream of sign-ups, tokens, access
// requests, approvals, denials and blocks, then started again on the same state. Every write
// acknowledged (201/204) before the kill must be there, and nothing may be half-written: a block
// that committed ends the user's token and pending request, if need be through the Directory's
// alarm after the restart; the indexes kept by the outbox (memberships, the owners' inbox) catch up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient, freePort, startServer, type Server } from './support/crash-server';

const CYCLES = Number(process.env.CRASH_CYCLES) || 4;
const VIRTUAL_USERS = 8;
const ADMIN_TOKEN = `crash-admin-${process.pid}`;
const VARS = { ADMIN_TOKEN, TOKEN_HASH_KEY: 'crash-restart-hash-key' };

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

describe('crash and restart under load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-crash-'));
  let server: Server | null = null;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write across ${CYCLES} SIGKILLs, and nothing half-written`, async () => {
    const port = await freePort();
    const start = async () => (server = await startServer({ port, persistTo: join(dir, 'state'), vars: VARS }));
    let url = (await start()).url;

    const api = apiClient(() => url);

    // The stage: an owner with a group and a project in it.
    const owner = await api('POST', '/users', ADMIN_TOKEN, { username: 'owner', name: 'Owner', password: 'owner-password' });
    expect(owner.status).toBe(201);
    const ownerToken = (await api('POST', `/users/${owner.body.id}/impersonation_tokens`, ADMIN_TOKEN, { name: 'owner', scopes: ['api'] })).body.token;
    const group = await api('POST', '/groups', ownerToken, { name: 'Crash', path: 'crash', visibility: 'public' });
    expect(group.status).toBe(201);
    const project = await api('POST', '/projects', ownerToken, { name: 'Site', path: 'site', namespace_id: group.body.id, visibility: 'public' });
    expect(project.status).toBe(201);
    const spaces = [`/groups/${group.body.id}`, `/projects/${project.body.id}`];

    const ackedUsers = new Map<string, string | null>(); // username → token (null until one is acknowledged)
    const ackedGroups: string[] = [];
    const stories: Story[] = [];
    let acknowledged = 0;
    let inFlightAtKills = 0;
    let serial = 0;

    /** One virtual user: signs up, gets a token, asks for access, is approved or denied; again. */
    const virtualUser = async (v: number, alive: () => boolean) => {
      while (alive()) {
        const n = serial++;
        const username = `c${v}x${n}`;
        let step = 'create';
        let story: Story | null = null;
        try {
          const created = await api('POST', '/users', ADMIN_TOKEN, { username, name: username, password: `pw-${username}-long` });
          expect(created.status).toBe(201);
          ackedUsers.set(username, null);
          acknowledged++;
          step = 'token';
          const token = await api('POST', `/users/${created.body.id}/impersonation_tokens`, ADMIN_TOKEN, { name: 't', scopes: ['api'] });
          expect(token.status).toBe(201);
          ackedUsers.set(username, token.body.token);
          acknowledged++;
          const ns = spaces[n % 2];
          story = { ns, userId: created.body.id, username, acked: 'none' };
          stories.push(story);
          story.inFlight = { to: 'pending' };
          const requested = await api('POST', `${ns}/access_requests`, token.body.token);
          expect(requested.status).toBe(201);
          Object.assign(story, { acked: 'pending', inFlight: undefined });
          acknowledged++;
          if (n % 8 === 1) {
            // Blocked by the administrator while the request waits: the request goes with the token.
            step = 'block';
            Object.assign(story, { blocked: 'in flight', inFlight: { to: 'none' } });
            const blocked = await api('POST', `/users/${created.body.id}/block`, ADMIN_TOKEN);
            expect(blocked.status).toBe(201);
            Object.assign(story, { blocked: 'acked', acked: 'none', inFlight: undefined });
            acknowledged++;
          } else if (n % 4 === 0) {
            // Denied by the owner, or withdrawn by the requester.
            story.inFlight = { to: 'none' };
            const denied = await api('DELETE', `${ns}/access_requests/${created.body.id}`, n % 8 === 0 ? token.body.token : ownerToken);
            expect(denied.status).toBe(204);
            Object.assign(story, { acked: 'none', inFlight: undefined });
            acknowledged++;
          } else if (n % 4 !== 1) {
            const level = [10, 20, 30, 40][n % 4];
            story.inFlight = { to: 'member', level };
            const approved = await api('PUT', `${ns}/access_requests/${created.body.id}/approve?access_level=${level}`, n % 3 ? ownerToken : ADMIN_TOKEN);
            expect(approved.status).toBe(201);
            Object.assign(story, { acked: 'member', ackedLevel: level, inFlight: undefined });
            acknowledged++;
          }
          if (v === 0) {
            step = 'group';
            const path = `g${n}`;
            const made = await api('POST', '/groups', ownerToken, { name: path, path, visibility: 'private' });
            expect(made.status).toBe(201);
            ackedGroups.push(path);
            acknowledged++;
          }
        } catch (e) {
          if (alive()) throw new Error(`${step} for ${username} failed while the server was up: ${e}`);
          inFlightAtKills++;
          return;
        }
      }
    };

    const verify = async () => {
      const blockedUsers = new Set<string>();
      for (const story of stories.filter((st) => st.blocked)) {
        const { state } = (await api('GET', `/users/${story.userId}`, ADMIN_TOKEN)).body as { state: string };
        if (story.blocked === 'acked') expect(state, `${story.username} was blocked`).toBe('blocked');
        if (state !== 'blocked') {
          story.blocked = undefined;
          continue;
        }
        // A block that committed ends the token at once, or (its fan-out cut short by the kill)
        // when the Directory's alarm finishes it after the restart.
        const token = ackedUsers.get(story.username);
        const finished = async () => {
          if (token && (await api('GET', '/user', token)).status !== 401) return false;
          const waiting = (await api('GET', `${story.ns}/access_requests?per_page=100`, ADMIN_TOKEN)).body as { id: number }[];
          return !waiting.some((r) => r.id === story.userId);
        };
        const deadline = Date.now() + 30_000;
        while (!(await finished())) {
          expect(Date.now() < deadline, `blocked ${story.username} still has a working token or a pending request`).toBe(true);
          await new Promise((r) => setTimeout(r, 250));
        }
        story.blocked = 'acked';
        blockedUsers.add(story.username);
      }
      for (const [username, token] of ackedUsers) {
        const found = await api('GET', `/users?username=${username}`, ADMIN_TOKEN);
        expect(found.body, `user ${username}`).toEqual([expect.objectContaining({ username })]);
        if (token && !blockedUsers.has(username)) expect((await api('GET', '/user', token)).body, `token of ${username}`).toMatchObject({ username });
      }
      for (const path of ackedGroups) expect((await api('GET', `/groups/${path}`, ownerToken)).status, `group ${path}`).toBe(200);
      for (const ns of spaces) {
        const members = new Map<number, number>();
        const pending = new Set<number>();
        for (let page = 1; ; page++) {
          const res = await api('GET', `${ns}/members?per_page=100&page=${page}`, ADMIN_TOKEN);
          for (const m of res.body as { id: number; access_level: number }[]) members.set(m.id, m.access_level);
          if (res.body.length < 100) break;
        }
        for (let page = 1; ; page++) {
          const res = await api('GET', `${ns}/access_requests?per_page=100&page=${page}`, ADMIN_TOKEN);
          for (const r of res.body as { id: number }[]) {
            expect(pending.has(r.id), `duplicate request of ${r.id} on ${ns}`).toBe(false);
            pending.add(r.id);
          }
          if (res.body.length < 100) break;
        }
        for (const id of pending) expect(members.has(id), `user ${id} is both member and requester of ${ns}`).toBe(false);
        const all = new Map<number, number>();
        for (let page = 1; ; page++) {
          const res = await api('GET', `${ns}/members/all?per_page=100&page=${page}`, ADMIN_TOKEN);
          for (const m of res.body as { id: number; access_level: number }[]) all.set(m.id, m.access_level);
          if (res.body.length < 100) break;
        }
        for (const [id, level] of members) expect(all.get(id), `member ${id} of ${ns} in members/all`).toBeGreaterThanOrEqual(level);
        const told = new Map(stories.filter((s) => s.ns === ns).map((s) => [s.userId, s]));
        for (const [id] of members) if (id !== owner.body.id) expect(told.has(id), `member ${id} of ${ns} nobody approved`).toBe(true);
        for (const s of told.values()) {
          const now: State = members.has(s.userId) ? 'member' : pending.has(s.userId) ? 'pending' : 'none';
          if (s.blocked === 'acked') expect(now, `blocked ${s.username} still waits on ${ns}`).toBe('none');
          const allowed = [s.acked, ...(s.inFlight ? [s.inFlight.to] : [])];
          expect(allowed, `${s.username} on ${ns} is ${now}`).toContain(now);
          if (now === 'member') expect([s.ackedLevel, s.inFlight?.level]).toContain(members.get(s.userId));
          // What is there now is what the next cycle builds on.
          Object.assign(s, { acked: now, ackedLevel: members.get(s.userId), inFlight: undefined });
        }
      }
    };

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let up = true;
      const load = Array.from({ length: VIRTUAL_USERS }, (_, v) => virtualUser(v, () => up));
      await new Promise((r) => setTimeout(r, 1500 + 400 * cycle));
      // The crash: SIGKILL to wrangler, workerd and everything else in the server's process group.
      up = false;
      const exited = new Promise<void>((r) => (server!.child.exitCode !== null || server!.child.signalCode !== null ? r() : server!.child.once('exit', r)));
      process.kill(-server!.pid, 'SIGKILL');
      await exited;
      await Promise.all(load);
      url = (await start()).url;
      await verify();
    }

    // The per-user membership index (pushed from each group's or project's object, with an outbox
    // and an alarm for what a crash interrupted) catches up: members see what they joined.
    const joined = stories.filter((s) => s.acked === 'member');
    const deadline = Date.now() + 30_000;
    for (const s of joined) {
      const token = ackedUsers.get(s.username)!;
      const [, kind, id] = s.ns.split('/');
      for (;;) {
        const mine = (await api('GET', `/${kind}?min_access_level=10&per_page=100`, token)).body as { id: number }[];
        if (mine.some((x) => x.id === Number(id))) break;
        expect(Date.now() < deadline, `${s.username} does not see ${s.ns} in /${kind}?min_access_level=10`).toBe(true);
        await new Promise((r) => setTimeout(r, 250));
      }
    }

    // The owners' inbox, kept by the same outbox, catches up too: the owner's holds exactly the
    // requests of both lists.
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
      await new Promise((r) => setTimeout(r, 250));
    }

    console.log(`crash-restart: ${CYCLES} SIGKILL cycles, ${acknowledged} acknowledged writes kept, ${inFlightAtKills} writes in flight at the kills`);
    expect(acknowledged).toBeGreaterThan(CYCLES * 10);
    expect(stories.some((s) => s.acked === 'member')).toBe(true);
  }, 60_000 + CYCLES * 30_000);
});
