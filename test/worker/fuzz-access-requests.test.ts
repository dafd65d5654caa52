import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from './support/contract';
import { fuzzParameters, hostileValue, reportCases, timeoutFor } from './support/fuzz';
import { ADMIN, call, issueToken, jsonBody, unique, type TestUser } from './support/http';
import { quickUser } from './support/world';

type Kind = 'groups' | 'projects';

/** The actors of every sequence: the owner of the top group, users, an administrator, nobody. */
const ACTORS = ['owner', 'u0', 'u1', 'u2', 'u3', 'u4', 'admin', 'root', 'anonymous'] as const;
type Actor = (typeof ACTORS)[number];
const USERS = ['u0', 'u1', 'u2', 'u3', 'u4'] as const;
type Subject = (typeof USERS)[number] | 'owner';
/** top (group) ⊃ sub (group) ⊃ app (project). */
const TARGETS = [
  ['groups', 'top'],
  ['groups', 'sub'],
  ['projects', 'app'],
] as const;
type Target = (typeof TARGETS)[number];

/** Approvers are mostly the ones who may approve; anyone else now and then. */
const MANAGER = fc.oneof({ arbitrary: fc.constantFrom<Actor>('owner', 'root', 'admin'), weight: 3 }, { arbitrary: fc.constantFrom(...ACTORS), weight: 2 });

const LEVELS = fc.oneof(
  { arbitrary: fc.constantFrom(10, 15, 20, 30, 40, 50, 5), weight: 5 },
  { arbitrary: fc.constantFrom<number | string | null>(0, 60, -1, 'abc', '', null, 30.5), weight: 1 },
  { arbitrary: fc.constant(undefined), weight: 2 },
);

/**
 * When access should end, as a request or an approval gives it: a date some days on, a date-time
 * some hours on (kept to the minute), or text that must be refused (a past date, not a date).
 */
type End = { days: number } | { hours: number } | { bad: string } | undefined;
const ENDS: fc.Arbitrary<End> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 60 }).map((days) => ({ days })), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 48 }).map((hours) => ({ hours })), weight: 2 },
  { arbitrary: fc.constantFrom('2020-01-01', 'tomorrow', '2026-13-45', '12:00').map((bad) => ({ bad })), weight: 1 },
);
/** The text sent for an end, and the end Knock must keep for it (null: it must be refused). */
const endOf = (end: Exclude<End, undefined>): { sent: string; kept: string | null } => {
  if ('bad' in end) return { sent: end.bad, kept: null };
  const at = new Date(Date.now() + ('days' in end ? end.days * 24 : end.hours) * 3_600_000).toISOString();
  return 'days' in end ? { sent: at.slice(0, 10), kept: at.slice(0, 10) } : { sent: at, kept: `${at.slice(0, 16)}:00.000Z` };
};

/** Why, as a requester says it: mostly nothing or a few words; now and then too long (refused). */
const REASONS = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 3 },
  { arbitrary: fc.constantFrom('to fix the release', 'on call this week', 'ünïcödé ✓ <b>'), weight: 2 },
  { arbitrary: fc.constant('x'.repeat(1001)), weight: 1 },
);
/** A level asked for: one both kinds grant, none, or one that must be refused. */
const ASKED_LEVELS = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: fc.constantFrom(10, 20, 30, 40), weight: 3 },
  { arbitrary: fc.constantFrom<number | string>(60, 'abc'), weight: 1 },
);

/** What a request asked, as the model keeps it. */
interface Ask {
  reason: string | null;
  access_level: number | null;
  expires_at: string | null;
}

type Op =
  | { op: 'request'; actor: Actor; target: Target; reason: string | undefined; level: number | string | undefined; end: End; via: 'query' | 'json' }
  | { op: 'approve'; actor: Actor; subject: Subject; pick: number | null; target: Target; level: number | string | null | undefined; end: End; via: 'query' | 'json' | 'form' }
  | { op: 'delete'; actor: Actor; subject: Subject; pick: number | null; target: Target }
  | { op: 'list'; actor: Actor; target: Target; page: string; perPage: string }
  | { op: 'members'; actor: Actor; target: Target; all: boolean }
  | { op: 'block' | 'unblock'; actor: Actor; subject: (typeof USERS)[number] };

type TargetOp = Exclude<Op, { op: 'block' | 'unblock' }>;
const onTarget = (op: Op): op is TargetOp => op.op !== 'block' && op.op !== 'unblock';

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('request' as const),
      actor: fc.constantFrom(...ACTORS),
      target: fc.constantFrom(...TARGETS),
      reason: REASONS,
      level: ASKED_LEVELS,
      end: ENDS,
      via: fc.constantFrom('query' as const, 'json' as const),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('approve' as const),
      actor: MANAGER,
      subject: fc.constantFrom<Subject>(...USERS, 'owner'),
      pick: fc.option(fc.nat(), { freq: 3 }),
      target: fc.constantFrom(...TARGETS),
      level: LEVELS,
      end: ENDS,
      via: fc.constantFrom('query' as const, 'json' as const, 'form' as const),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('delete' as const),
      actor: fc.oneof(MANAGER, fc.constant<Actor>('u0')),
      subject: fc.constantFrom<Subject>(...USERS, 'owner'),
      pick: fc.option(fc.nat(), { freq: 3 }),
      target: fc.constantFrom(...TARGETS),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('list' as const),
      actor: MANAGER,
      target: fc.constantFrom(...TARGETS),
      page: fc.oneof(fc.constantFrom('1', '2', '3'), hostileValue),
      perPage: fc.oneof(fc.constantFrom('1', '2', '20', '100'), hostileValue),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ op: fc.constant('members' as const), actor: fc.constantFrom(...ACTORS), target: fc.constantFrom(...TARGETS), all: fc.boolean() }),
    weight: 1,
  },
  // Blocking a user takes their pending requests away everywhere and ends their token.
  { arbitrary: fc.record({ op: fc.constantFrom('block' as const, 'unblock' as const), actor: MANAGER, subject: fc.constantFrom(...USERS) }), weight: 1 },
);

/** A sequence of steps; each step is one operation, or several sent at once. */
const stepsArbitrary = fc.array(fc.oneof({ arbitrary: opArbitrary.map((op) => [op]), weight: 3 }, { arbitrary: fc.array(opArbitrary, { minLength: 2, maxLength: 6 }), weight: 1 }), {
  minLength: 4,
  maxLength: 16,
});

interface Member {
  id: number;
  access_level: number;
  expires_at: string | null;
}

/** The fields of a request or an approval, without those not given. */
const fieldsOf = (fields: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));

describe('fuzzing sequences of access requests, approvals, denials and listings', () => {
  const people = {} as Record<Subject, TestUser>;
  let admin: TestUser;

  beforeAll(async () => {
    for (const name of [...USERS, 'owner'] as Subject[]) people[name] = await quickUser(`fz${name}`);
    admin = await quickUser('fzadm', { admin: true });
  });

  const headersOf = (actor: Actor): Record<string, string> =>
    actor === 'anonymous' ? {} : actor === 'root' ? ADMIN : actor === 'admin' ? admin.headers : people[actor].headers;

  /** A fresh tree per sequence: top ⊃ sub ⊃ app, all created by the owner. */
  const createTree = async (): Promise<Record<Target[1], number>> => {
    const make = async (kind: Kind, body: Record<string, unknown>) => {
      const path = unique('fz');
      const res = await call(`/api/v4/${kind}`, jsonBody({ name: path, path, visibility: 'public', ...body }, people.owner.headers));
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    const top = await make('groups', {});
    const sub = await make('groups', { parent_id: top });
    const app = await make('projects', { namespace_id: sub });
    return { top, sub, app };
  };

  /** `end`: the op's end as sent (resolved once, so the model expects what was sent). */
  const send = async (op: Op, ids: Record<Target[1], number>, end?: { sent: string }): Promise<Response> => {
    if (!onTarget(op)) {
      const path = `/api/v4/users/${people[op.subject].id}/${op.op}`;
      const res = await call(path, { method: 'POST', headers: headersOf(op.actor) });
      await expectContract({ method: 'POST', path, res: res.clone() });
      return res;
    }
    const [kind, name] = op.target;
    const base = `/api/v4/${kind}/${ids[name]}`;
    const headers = headersOf(op.actor);
    let path: string;
    let init: RequestInit;
    switch (op.op) {
      case 'request': {
        path = `${base}/access_requests`;
        const fields = { reason: op.reason, access_level: op.level, expires_at: end?.sent };
        if (op.via === 'json' && Object.values(fields).some((v) => v !== undefined)) init = jsonBody(fields, headers);
        else {
          const query = new URLSearchParams(fieldsOf(fields)).toString();
          if (query) path += `?${query}`;
          init = { method: 'POST', headers };
        }
        break;
      }
      case 'approve': {
        path = `${base}/access_requests/${people[op.subject].id}/approve`;
        const fields = fieldsOf({ access_level: op.level, expires_at: end?.sent });
        if (Object.keys(fields).length === 0) init = { method: 'PUT', headers };
        else if (op.via === 'query') {
          path += `?${new URLSearchParams(fields)}`;
          init = { method: 'PUT', headers };
        } else if (op.via === 'json') init = jsonBody({ ...fields, ...(op.level === undefined ? {} : { access_level: op.level }) }, headers, 'PUT');
        else {
          init = {
            method: 'PUT',
            headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          };
        }
        break;
      }
      case 'delete':
        path = `${base}/access_requests/${people[op.subject].id}`;
        init = { method: 'DELETE', headers };
        break;
      case 'list':
        path = `${base}/access_requests?${new URLSearchParams({ page: op.page, per_page: op.perPage })}`;
        init = { headers };
        break;
      case 'members':
        path = `${base}/members${op.all ? '/all' : ''}?per_page=100`;
        init = { headers };
        break;
    }
    const res = await call(path, init);
    await expectContract({ method: init.method ?? 'GET', path, res: res.clone() });
    return res;
  };

  const everyPage = async <T,>(path: string): Promise<T[]> => {
    const out: T[] = [];
    for (let page = 1; ; page++) {
      const res = await call(`${path}?per_page=100&page=${page}`, { headers: ADMIN });
      expect(res.status).toBe(200);
      out.push(...((await res.json()) as T[]));
      if (!res.headers.get('x-next-page')) return out;
    }
  };

  const params = fuzzParameters(30);

  it(
    'never leaves a user both member and requester (but a member asking to extend), every member came from creation or an approval, at the level and end asked or given',
    async () => {
      let cases = 0;
      let operations = 0;
      await fc.assert(
        fc.asyncProperty(stepsArbitrary, async (steps) => {
          cases++;
          const ids = await createTree();
          // Who may be a direct member of what, at which level until when, by the API's own
          // answers: the creator, and 201 approvals.
          const legitimate = new Map<string, { level: number; end: string | null }>();
          const key = (name: Target[1], userId: number) => `${name}:${userId}`;
          for (const name of ['top', 'sub', 'app'] as const) legitimate.set(key(name, people.owner.id), { level: 50, end: null });
          // Pending requests, with what each asked.
          const pending = new Map<string, Ask>();
          const askOf = (r: Ask): Ask => ({ reason: r.reason, access_level: r.access_level, expires_at: r.expires_at });

          // Most approvals and denials name a user with a pending request (the model's), if any.
          const blocked = new Set<Subject>();
          const resolve = (op: Op): Op => {
            if ((op.op !== 'approve' && op.op !== 'delete') || op.pick === null) return op;
            const onTarget = [...pending.keys()].filter((k) => k.startsWith(`${op.target[1]}:`));
            const waiting = onTarget.length > 0 ? onTarget : [...pending.keys()];
            if (waiting.length === 0) return op;
            const [name, id] = waiting[op.pick % waiting.length].split(':');
            const target = TARGETS.find((t) => t[1] === name)!;
            return { ...op, target, subject: (Object.keys(people) as Subject[]).find((n) => people[n].id === Number(id))! };
          };
          for (const generated of steps) {
            const step = generated.map(resolve);
            operations += step.length;
            const ends = step.map((op) => ('end' in op && op.end ? endOf(op.end) : undefined));
            const answers = await Promise.all(step.map((op, i) => send(op, ids, ends[i])));
            const moderated = new Set<(typeof USERS)[number]>();
            for (const [i, op] of step.entries()) {
              if (onTarget(op) || answers[i].status !== 201) continue;
              moderated.add(op.subject);
              // Alone, GitLab's answer says what changed: true, or null/false when nothing did.
              const answer = await answers[i].json();
              if (step.length === 1) expect(answer).toBe(op.op === 'block' ? (blocked.has(op.subject) ? null : true) : blocked.has(op.subject));
            }
            // Several at once ran in an order the answers do not fully tell: ask the service.
            for (const subject of moderated) {
              const { state } = (await (await call(`/api/v4/users/${people[subject].id}`, { headers: ADMIN })).json()) as { state: string };
              if (state === 'blocked') {
                blocked.add(subject);
                for (const k of [...pending.keys()]) if (k.endsWith(`:${people[subject].id}`)) pending.delete(k);
              } else {
                // Unblocked (or never blocked): a block's ended token stays ended; the user gets a new one.
                blocked.delete(subject);
                people[subject].headers = { 'PRIVATE-TOKEN': await issueToken(people[subject].id, people[subject].username, ['api']) };
              }
            }
            // Requests last: a request answered 201 beside an approval or a denial of the same
            // user's pending request ran after it (while one is pending, a request is refused).
            const order = [...step.keys()].sort((a, b) => Number(step[a].op === 'request') - Number(step[b].op === 'request'));
            for (const i of order) {
              const op = step[i];
              const status = answers[i].status;
              if (!onTarget(op)) continue;
              const [, name] = op.target;
              const end = ends[i];
              if (op.op === 'approve' && status === 201) {
                const subjectKey = key(name, people[op.subject].id);
                // Sequentially, an approval only succeeds for a pending request.
                if (step.length === 1) expect(pending.has(subjectKey), `approved ${subjectKey} without a pending request`).toBe(true);
                expect(end?.kept, `approved with an end that must be refused: ${end?.sent}`).not.toBe(null);
                const granted = (await answers[i].json()) as Member;
                // The level and end default to what was asked (GitLab's Developer when nothing was).
                const ask = pending.get(subjectKey);
                if (ask) {
                  expect(granted.access_level).toBe(typeof op.level === 'number' ? op.level : (ask.access_level ?? 30));
                  expect(granted.expires_at).toBe(end?.kept ?? ask.expires_at);
                }
                pending.delete(subjectKey);
                legitimate.set(subjectKey, { level: granted.access_level, end: granted.expires_at });
              }
              if (op.op === 'request' && status === 201) {
                const actorId = op.actor === 'admin' || op.actor === 'root' || op.actor === 'anonymous' ? null : people[op.actor].id;
                expect(actorId, 'an administrator or anonymous caller made an access request').not.toBeNull();
                expect(op.reason === undefined || op.reason.length <= 1000, 'a reason over 1,000 characters was taken').toBe(true);
                expect(op.level === undefined || [10, 20, 30, 40].includes(op.level as number), `asked for level ${op.level}`).toBe(true);
                expect(end?.kept, `asked for an end that must be refused: ${end?.sent}`).not.toBe(null);
                // A member (whose access has an end) asks to extend it, at their current level.
                const current = legitimate.get(key(name, actorId!));
                const ask = askOf((await answers[i].json()) as Ask);
                const asked = typeof op.level === 'number' ? op.level : (current?.level ?? null);
                expect({ ...ask, access_level: null }).toEqual({ reason: op.reason ?? null, access_level: null, expires_at: end?.kept ?? null });
                // Beside an approval of the same user, the request may have come first (not yet a member).
                expect(step.length === 1 || typeof op.level === 'number' ? [asked] : [asked, null]).toContain(ask.access_level);
                if (current && step.length === 1) expect(current.end, 'a member without an end asked again').not.toBeNull();
                pending.set(key(name, actorId!), ask);
              }
              if (op.op === 'delete' && answers[i].status === 204) {
                if (step.length === 1) expect(pending.has(key(name, people[op.subject].id))).toBe(true);
                pending.delete(key(name, people[op.subject].id));
              }
            }
            // Operations sent at once ran in an order the answers do not tell: take the pending
            // requests of the targets they touched from the service.
            if (step.length > 1) {
              const touched = step.some((op) => !onTarget(op)) ? TARGETS : TARGETS.filter((t) => step.some((op) => onTarget(op) && op.target[1] === t[1]));
              for (const [kind, name] of touched) {
                for (const k of [...pending.keys()]) if (k.startsWith(`${name}:`)) pending.delete(k);
                for (const r of await everyPage<Ask & { id: number }>(`/api/v4/${kind}/${ids[name]}/access_requests`)) pending.set(key(name, r.id), askOf(r));
              }
            }
          }

          for (const [kind, name] of TARGETS) {
            const base = `/api/v4/${kind}/${ids[name]}`;
            const members = await everyPage<Member>(`${base}/members`);
            const requesters = await everyPage<Ask & { id: number }>(`${base}/access_requests`);
            const memberIds = new Set(members.map((m) => m.id));
            // Only a member whose access has an end may ask again (to extend it).
            for (const r of requesters) {
              if (memberIds.has(r.id)) expect(members.find((m) => m.id === r.id)?.expires_at, `user ${r.id} is both member (with no end) and requester of ${name}`).not.toBeNull();
              expect(askOf(r), `what ${r.id} asked of ${name}`).toEqual(pending.get(key(name, r.id)));
            }
            expect(new Set(requesters.map((r) => r.id)).size, `duplicate requests on ${name}`).toBe(requesters.length);
            expect(memberIds.size, `duplicate members on ${name}`).toBe(members.length);
            for (const m of members) {
              expect(legitimate.has(key(name, m.id)), `member ${m.id} of ${name} came from neither creation nor approval`).toBe(true);
              expect({ level: m.access_level, end: m.expires_at }).toEqual(legitimate.get(key(name, m.id)));
            }
            for (const [k] of legitimate) if (k.startsWith(`${name}:`)) expect(memberIds.has(Number(k.split(':')[1])), `approved ${k} is missing`).toBe(true);
            // The model of pending requests agrees with the service's list.
            expect(new Set(requesters.map((r) => key(name, r.id)))).toEqual(new Set([...pending.keys()].filter((k) => k.startsWith(`${name}:`))));
            for (const b of blocked) expect(requesters.map((r) => r.id), `blocked ${b} still requests access to ${name}`).not.toContain(people[b].id);
          }
          // Next sequence: everyone active again, with a working token.
          for (const b of blocked) {
            expect((await call(`/api/v4/users/${people[b].id}`, { headers: ADMIN }).then((r) => r.json())) as { state: string }).toMatchObject({ state: 'blocked' });
            expect((await call(`/api/v4/users/${people[b].id}/unblock`, { method: 'POST', headers: ADMIN })).status).toBe(201);
            people[b].headers = { 'PRIVATE-TOKEN': await issueToken(people[b].id, people[b].username, ['api']) };
          }
        }),
        params,
      );
      reportCases(`sequences of access-request operations (${operations} operations)`, cases);
    },
    timeoutFor(params.numRuns, 1500),
  );
});
