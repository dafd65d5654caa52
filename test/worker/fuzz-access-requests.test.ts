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

type Op =
  | { op: 'request'; actor: Actor; target: Target }
  | { op: 'approve'; actor: Actor; subject: Subject; pick: number | null; target: Target; level: number | string | null | undefined; via: 'query' | 'json' | 'form' }
  | { op: 'delete'; actor: Actor; subject: Subject; pick: number | null; target: Target }
  | { op: 'list'; actor: Actor; target: Target; page: string; perPage: string }
  | { op: 'members'; actor: Actor; target: Target; all: boolean }
  | { op: 'block' | 'unblock'; actor: Actor; subject: (typeof USERS)[number] };

type TargetOp = Exclude<Op, { op: 'block' | 'unblock' }>;
const onTarget = (op: Op): op is TargetOp => op.op !== 'block' && op.op !== 'unblock';

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('request' as const), actor: fc.constantFrom(...ACTORS), target: fc.constantFrom(...TARGETS) }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('approve' as const),
      actor: MANAGER,
      subject: fc.constantFrom<Subject>(...USERS, 'owner'),
      pick: fc.option(fc.nat(), { freq: 3 }),
      target: fc.constantFrom(...TARGETS),
      level: LEVELS,
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
}

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

  const send = async (op: Op, ids: Record<Target[1], number>): Promise<Response> => {
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
      case 'request':
        path = `${base}/access_requests`;
        init = { method: 'POST', headers };
        break;
      case 'approve': {
        path = `${base}/access_requests/${people[op.subject].id}/approve`;
        const level = op.level;
        if (level === undefined) init = { method: 'PUT', headers };
        else if (op.via === 'query') {
          path += `?access_level=${encodeURIComponent(String(level))}`;
          init = { method: 'PUT', headers };
        } else if (op.via === 'json') init = jsonBody({ access_level: level }, headers, 'PUT');
        else {
          init = {
            method: 'PUT',
            headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ access_level: String(level) }).toString(),
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
    'never leaves a user both member and requester, and every member came from creation or an approval',
    async () => {
      let cases = 0;
      let operations = 0;
      await fc.assert(
        fc.asyncProperty(stepsArbitrary, async (steps) => {
          cases++;
          const ids = await createTree();
          // Who may be a direct member of what, by the API's own answers: the creator, and 201 approvals.
          const legitimate = new Map<string, number>();
          const key = (name: Target[1], userId: number) => `${name}:${userId}`;
          for (const name of ['top', 'sub', 'app'] as const) legitimate.set(key(name, people.owner.id), 50);
          const pending = new Set<string>();

          // Most approvals and denials name a user with a pending request (the model's), if any.
          const blocked = new Set<Subject>();
          const resolve = (op: Op): Op => {
            if ((op.op !== 'approve' && op.op !== 'delete') || op.pick === null) return op;
            const onTarget = [...pending].filter((k) => k.startsWith(`${op.target[1]}:`));
            const waiting = onTarget.length > 0 ? onTarget : [...pending];
            if (waiting.length === 0) return op;
            const [name, id] = waiting[op.pick % waiting.length].split(':');
            const target = TARGETS.find((t) => t[1] === name)!;
            return { ...op, target, subject: (Object.keys(people) as Subject[]).find((n) => people[n].id === Number(id))! };
          };
          for (const generated of steps) {
            const step = generated.map(resolve);
            operations += step.length;
            const answers = await Promise.all(step.map((op) => send(op, ids)));
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
                for (const k of [...pending]) if (k.endsWith(`:${people[subject].id}`)) pending.delete(k);
              } else {
                // Unblocked (or never blocked): a block's ended token stays ended; the user gets a new one.
                blocked.delete(subject);
                people[subject].headers = { 'PRIVATE-TOKEN': await issueToken(people[subject].id, people[subject].username, ['api']) };
              }
            }
            step.forEach((op, i) => {
              const status = answers[i].status;
              if (!onTarget(op)) return;
              const [, name] = op.target;
              if (op.op === 'approve' && status === 201) {
                const subjectKey = key(name, people[op.subject].id);
                // Sequentially, an approval only succeeds for a pending request.
                if (step.length === 1) expect(pending.has(subjectKey), `approved ${subjectKey} without a pending request`).toBe(true);
                pending.delete(subjectKey);
                legitimate.set(subjectKey, typeof op.level === 'number' ? op.level : 30);
              }
              if (op.op === 'request' && status === 201) {
                const actorId = op.actor === 'admin' || op.actor === 'root' || op.actor === 'anonymous' ? null : people[op.actor].id;
                expect(actorId, 'an administrator or anonymous caller made an access request').not.toBeNull();
                pending.add(key(name, actorId!));
              }
              if (op.op === 'delete' && status === 204) {
                if (step.length === 1) expect(pending.has(key(name, people[op.subject].id))).toBe(true);
                pending.delete(key(name, people[op.subject].id));
              }
            });
            // Operations sent at once ran in an order the answers do not tell: take the pending
            // requests of the targets they touched from the service.
            if (step.length > 1) {
              const touched = step.some((op) => !onTarget(op)) ? TARGETS : TARGETS.filter((t) => step.some((op) => onTarget(op) && op.target[1] === t[1]));
              for (const [kind, name] of touched) {
                for (const k of [...pending]) if (k.startsWith(`${name}:`)) pending.delete(k);
                for (const r of await everyPage<{ id: number }>(`/api/v4/${kind}/${ids[name]}/access_requests`)) pending.add(key(name, r.id));
              }
            }
          }

          for (const [kind, name] of TARGETS) {
            const base = `/api/v4/${kind}/${ids[name]}`;
            const members = await everyPage<Member>(`${base}/members`);
            const requesters = await everyPage<{ id: number }>(`${base}/access_requests`);
            const memberIds = new Set(members.map((m) => m.id));
            for (const r of requesters) expect(memberIds.has(r.id), `user ${r.id} is both member and requester of ${name}`).toBe(false);
            expect(new Set(requesters.map((r) => r.id)).size, `duplicate requests on ${name}`).toBe(requesters.length);
            expect(memberIds.size, `duplicate members on ${name}`).toBe(members.length);
            for (const m of members) {
              expect(legitimate.has(key(name, m.id)), `member ${m.id} of ${name} came from neither creation nor approval`).toBe(true);
              expect(m.access_level).toBe(legitimate.get(key(name, m.id)));
            }
            for (const [k] of legitimate) if (k.startsWith(`${name}:`)) expect(memberIds.has(Number(k.split(':')[1])), `approved ${k} is missing`).toBe(true);
            // The model of pending requests agrees with the service's list.
            expect(new Set(requesters.map((r) => key(name, r.id)))).toEqual(new Set([...pending].filter((k) => k.startsWith(`${name}:`))));
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
