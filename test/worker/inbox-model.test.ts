import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { levelsAllowedToApprove } from '../../shared/access-levels';
import type { InboxAccessRequest, OwnAccessRequest } from '../../shared/api-types';
import { clock, todayUtc } from '../../worker/clock';
import { resetClock } from './support/clock';
import {
  expectedOwnRequest,
  inboxLine,
  LAYOUT,
  LEAVES_FIRST,
  MAX_DAYS,
  opArbitrary,
  OPS_PER_RUN,
  REQUESTERS,
  shownOwnRequest,
  SOURCES,
  USERS,
  WATCHED,
  type Actor,
  type Op,
  type Outcome,
  type Route,
  type SourceName,
  type UserName,
  type Watched,
} from '../unit/support/inbox-operations';
import { fuzzParameters, reportCases, timeoutFor } from './support/fuzz';
import { ADMIN, call, issueToken, unique, type TestUser } from './support/http';
import { startWorker } from './support/namespaces';
import { quickUser } from './support/world';

/**
 * The owners' inbox and the requesters' view against the per-source lists, after random
 * sequences of requests, approvals, denials, withdrawals, member changes, expiry (the clock moves
 * a day), renames, settings changes, deletions and blocked requesters (fixed seed; FUZZ_RUNS and
 * FUZZ_SEED as in docs/testing.md).
 *
 * One sequence of 100 here, through HTTP and every Durable Object, proves the wiring; the same
 * operations by the thousand run in Node against the index partitions' code
 * (test/unit/inbox-model.test.ts), which is where the model's breadth is.
 *
 * After every operation each watched user polls the inbox with the ETag they hold: a 304 means
 * their inbox is what they saw last, a 200 must show something different. After every operation
 * that changed something, what each holds must be exactly what the per-source lists say: every request of
 * each group and project whose list they may read (`GET /:kind/:id/access_requests` is 200), with
 * its source's full path and name, and the highest level their effective level lets them grant
 * (`members/all`; Owner for an administrator). Each requester's own view must agree with the
 * answers the operations got (approved at what level and expiry, denied, withdrawn, expired),
 * every few operations.
 */

/** How often the requesters' own views are compared (the inboxes: after every change, and at the end). */
const CHECK_OWN_EVERY = 10;

interface Source {
  name: SourceName;
  route: Route;
  id: number;
  path: string;
  deleted: boolean;
}

const send = (who: { headers: Record<string, string> }, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(`/api/v4${path}`, {
    method,
    headers: { ...who.headers, ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const expectStatus = async (res: Response, ...ok: number[]) => {
  const text = await res.text();
  if (!ok.includes(res.status)) throw new Error(`unexpected ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
};

const dateIn = (days: number) => new Date(clock.now() + days * 24 * 3600 * 1000).toISOString().slice(0, 10);

describe('the inbox against the per-source lists (model-based)', () => {
  let instanceAdmin: TestUser;
  beforeAll(async () => {
    await startWorker();
    instanceAdmin = await quickUser('madm', { admin: true });
  }, 30_000);

  const { numRuns, ...params } = fuzzParameters(1);
  // About 120 ms an operation on a quiet machine (each may poll six inboxes and read every list
  // they may read); the budget is for a machine also running the other suites, not a goal.
  it(`${numRuns} sequences of ${OPS_PER_RUN} operations`, { timeout: timeoutFor(numRuns * OPS_PER_RUN, 500) }, async () => {
    let operations = 0;
    let checks = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: OPS_PER_RUN, maxLength: OPS_PER_RUN }), async (ops) => {
        resetClock();
        const sequenceStart = new Date().toISOString();
        const users = Object.fromEntries(await Promise.all(USERS.map(async (u) => [u, await quickUser(u.replace(/\d/, ''))]))) as Record<UserName, TestUser>;
        const actor = (a: Actor) => (a === 'admin' ? instanceAdmin : users[a]);
        const sources = {} as Record<SourceName, Source>;
        for (const name of SOURCES) {
          const { route, owner, parent } = LAYOUT[name];
          const path = unique(name);
          const body = { name: path, path, visibility: 'public', ...(parent ? { [route === 'groups' ? 'parent_id' : 'namespace_id']: sources[parent].id } : {}) };
          const created = await expectStatus(await send(users[owner], 'POST', `/${route}`, body), 201);
          sources[name] = { name, route, id: created.id, path, deleted: false };
        }
        const outcomes = new Map<string, Outcome>();
        const outcomeKey = (who: UserName, s: SourceName) => `${who}:${s}`;
        const held = new Map<Watched, { etag: string; items: InboxAccessRequest[] }>();
        let days = 0;

        const inboxOf = (w: Watched) => (w === 'admin' ? instanceAdmin : users[w]);
        /**
         * Polls each watched inbox with the ETag held: 304 keeps it, a 200 must differ. The
         * administrator's inbox is every pending request the runtime holds, other test files' too:
         * it is read from the sequence's start and kept to this sequence's groups and projects, and
         * a new ETag may come from the other files' work (an
         * object's alarm pushing late), so only what it shows is compared (test/unit/inbox-model.test.ts
         * holds the administrator's ETag to the rule).
         */
        const poll = (after: string) =>
          Promise.all(
            WATCHED.map(async (w) => {
              const before = held.get(w);
              const query = w === 'admin' ? `per_page=100&min_requested_at=${encodeURIComponent(sequenceStart)}` : 'per_page=100';
              const res = await send(inboxOf(w), 'GET', `/access_requests?${query}`, undefined, before ? { 'If-None-Match': before.etag } : {});
              const body = await expectStatus(res, 200, 304);
              if (res.status === 304) {
                expect(before, `${w}: 304 without an ETag`).toBeDefined();
                return;
              }
              // The administrator's: only this sequence's groups and projects (other files' requests,
              // some made on a clock they moved ahead, are pending in the same runtime).
              const ours = new Set(Object.values(sources).map((s) => s.id));
              const items = (body as InboxAccessRequest[]).filter((i) => w !== 'admin' || ours.has(i.source_id));
              if (before && w !== 'admin') expect(items.map(inboxLine), `${w}: a new ETag after ${after}, but the same inbox`).not.toEqual(before.items.map(inboxLine));
              held.set(w, { etag: res.headers.get('etag') ?? '', items });
            }),
          );

        /**
         * What the per-source lists (and members/all) say each watched inbox must hold, and the
         * operations' answers each requester's own view.
         */
        const check = async (after: string, withOwn: boolean) => {
          checks++;
          const live = Object.values(sources).filter((s) => !s.deleted);
          const described = new Map<number, { fullPath: string; name: string; levels: Map<number, number> }>();
          await Promise.all(
            live.map(async (s) => {
              const row = await expectStatus(await send(instanceAdmin, 'GET', `/${s.route}/${s.id}`), 200);
              // Every effective level at once (the run has 8 users and the creators above, under a page).
              const all = (await expectStatus(await send(instanceAdmin, 'GET', `/${s.route}/${s.id}/members/all?per_page=100`), 200)) as { id: number; access_level: number }[];
              const levels = new Map(all.map((m) => [m.id, m.access_level]));
              described.set(s.id, { fullPath: s.route === 'groups' ? row.full_path : row.path_with_namespace, name: row.name, levels });
            }),
          );
          const expectedOf = async (w: Watched) => {
            const who = inboxOf(w);
            const perSource = await Promise.all(
              live.map(async (s) => {
                const res = await send(who, 'GET', `/${s.route}/${s.id}/access_requests?per_page=100`);
                const list = await expectStatus(res, 200, 403, 404);
                if (res.status !== 200) return [];
                const { fullPath, name, levels } = described.get(s.id)!;
                let max = 50;
                if (w !== 'admin') {
                  const level = levels.get(who.id);
                  expect(level, `${w} reads the requests of ${s.name} without being in its members/all`).toBeDefined();
                  max = levelsAllowedToApprove(s.route === 'groups' ? 'group' : 'project', level!).at(-1)?.value ?? 0;
                }
                const sourceType = s.route === 'groups' ? 'Namespace' : 'Project';
                return (list as { id: number; username: string }[]).map((r) =>
                  inboxLine({ source_type: sourceType, source_id: s.id, id: r.id, source_full_path: fullPath, source_name: name, username: r.username, max_access_level: max }),
                );
              }),
            );
            return perSource.flat();
          };
          const ownExpectedOf = async (who: UserName) => {
            const perSource = await Promise.all(
              live.map(async (s) => {
                const o = outcomes.get(outcomeKey(who, s.name));
                if (!o || o.status === 'removed') return [];
                if ((await send(users[who], 'GET', `/${s.route}/${s.id}`)).status !== 200) return [];
                return [expectedOwnRequest(s.route, s.id, o, todayUtc())];
              }),
            );
            return perSource.flat();
          };
          await Promise.all([
            ...WATCHED.map(async (w) => {
              const expected = await expectedOf(w);
              const mine = held.get(w)!.items;
              expect(mine.map(inboxLine).sort(), `${w}'s inbox after ${after}`).toEqual(expected.sort());
              const times = mine.map((i) => i.requested_at);
              expect(times, `${w}'s inbox is oldest first`).toEqual([...times].sort());
            }),
            ...(withOwn ? REQUESTERS : []).map(async (who) => {
              const expected = await ownExpectedOf(who);
              const own = (await expectStatus(await send(users[who], 'GET', '/user/access_requests?per_page=100'), 200)) as OwnAccessRequest[];
              const seen = own.map(shownOwnRequest);
              expect(seen.sort(), `${who}'s own requests after ${after}`).toEqual(expected.sort());
            }),
          ]);
        };

        /** Applies one operation; true when it changed something (a 2xx answer). */
        const apply = async (op: Op): Promise<boolean> => {
          const s = 'source' in op ? sources[op.source] : null;
          if (s?.deleted) return false;
          switch (op.op) {
            case 'request': {
              const res = await send(users[op.who], 'POST', `/${s!.route}/${s!.id}/access_requests`);
              await expectStatus(res, 201, 400, 403, 404);
              if (res.status === 201) outcomes.set(outcomeKey(op.who, op.source), { status: 'pending' });
              return res.status === 201;
            }
            case 'approve': {
              const expiresAt = op.expiresIn === null ? null : dateIn(op.expiresIn);
              const body = { access_level: op.level, ...(expiresAt ? { expires_at: expiresAt } : {}) };
              const res = await send(actor(op.actor), 'PUT', `/${s!.route}/${s!.id}/access_requests/${users[op.who].id}/approve`, body);
              await expectStatus(res, 201, 400, 403, 404);
              if (res.status === 201) outcomes.set(outcomeKey(op.who, op.source), { status: 'approved', level: op.level, expiresAt });
              return res.status === 201;
            }
            case 'deny':
            case 'withdraw': {
              const by = op.op === 'deny' ? actor(op.actor) : users[op.who];
              const res = await send(by, 'DELETE', `/${s!.route}/${s!.id}/access_requests/${users[op.who].id}`);
              await expectStatus(res, 204, 403, 404);
              if (res.status === 204) outcomes.set(outcomeKey(op.who, op.source), { status: by.id === users[op.who].id ? 'withdrawn' : 'denied' });
              return res.status === 204;
            }
            case 'add': {
              const expiresAt = op.expiresIn === null ? null : dateIn(op.expiresIn);
              const body = { user_id: users[op.who].id, access_level: op.level, ...(expiresAt ? { expires_at: expiresAt } : {}) };
              const res = await send(actor(op.actor), 'POST', `/${s!.route}/${s!.id}/members`, body);
              await expectStatus(res, 201, 400, 403, 404, 409);
              const k = outcomeKey(op.who, op.source);
              if (res.status === 201 && outcomes.get(k)?.status === 'pending') outcomes.set(k, { status: 'approved', level: op.level, expiresAt });
              return res.status === 201;
            }
            case 'update': {
              const res = await send(actor(op.actor), 'PUT', `/${s!.route}/${s!.id}/members/${users[op.who].id}`, { access_level: op.level });
              await expectStatus(res, 200, 400, 403, 404);
              return res.status === 200;
            }
            case 'remove': {
              const res = await send(actor(op.actor), 'DELETE', `/${s!.route}/${s!.id}/members/${users[op.who].id}`);
              await expectStatus(res, 204, 403, 404);
              return res.status === 204;
            }
            case 'rename': {
              const path = unique(`${op.source}r`);
              const res = await send(actor(op.actor), 'PUT', `/${s!.route}/${s!.id}`, { path, name: `${path} name` });
              await expectStatus(res, 200, 403, 404);
              if (res.status === 200) s!.path = path;
              return res.status === 200;
            }
            case 'settings': {
              const body = { ...(op.requests === null ? {} : { request_access_enabled: op.requests }), ...(op.visibility === null ? {} : { visibility: op.visibility }) };
              const res = await send(actor(op.actor), 'PUT', `/${s!.route}/${s!.id}`, body);
              await expectStatus(res, 200, 400, 403, 404);
              return res.status === 200;
            }
            case 'delete': {
              const res = await send(actor(op.actor), 'DELETE', `/${s!.route}/${s!.id}`);
              await expectStatus(res, 202, 403, 404);
              if (res.status === 202) s!.deleted = true;
              return res.status === 202;
            }
            case 'block': {
              // Blocked, then let in again at once: their pending requests are gone, they may act again.
              const who = users[op.who].id;
              await expectStatus(await send(instanceAdmin, 'POST', `/users/${who}/block`), 201);
              for (const name of SOURCES) {
                const k = outcomeKey(op.who, name);
                if (outcomes.get(k)?.status === 'pending') outcomes.set(k, { status: 'removed' });
              }
              await expectStatus(await send(instanceAdmin, 'POST', `/users/${who}/unblock`), 201);
              // The block ended their tokens.
              users[op.who] = { ...users[op.who], headers: { 'PRIVATE-TOKEN': await issueToken(who, users[op.who].username, ['api']) } };
              return true;
            }
            case 'day': {
              // Memberships expire at 00:00 UTC of their date; tokens (30 days) outlive the run.
              if (days >= MAX_DAYS) return false;
              days++;
              const base = clock.now();
              clock.now = () => base + 24 * 3600 * 1000;
              return true;
            }
          }
        };

        try {
          await poll('the start');
          for (const [i, op] of ops.entries()) {
            const changed = await apply(op);
            operations++;
            const what = `#${i} ${JSON.stringify(op)}`;
            await poll(what);
            const ownToo = i % CHECK_OWN_EVERY === CHECK_OWN_EVERY - 1;
            if (changed || ownToo) await check(what, ownToo);
          }
          await check('the end', true);
        } finally {
          // Leave nothing pending for the next sequence's administrator.
          for (const name of LEAVES_FIRST) {
            if (!sources[name]?.deleted) await send({ headers: ADMIN }, 'DELETE', `/${sources[name].route}/${sources[name].id}`);
          }
          resetClock();
        }
      }),
      // Sequences have a fixed length, so shrinking would only replay them: a failure names the
      // operation after which the inbox went wrong, and FUZZ_SEED replays it.
      { ...params, numRuns, endOnFailure: true },
    );
    reportCases(`inbox model: ${operations} operations, ${checks} comparisons with the per-source lists`, numRuns);
    expect(operations).toBeGreaterThanOrEqual(numRuns * OPS_PER_RUN);
  });
});
