import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { ADMIN, api, unique, type TestUser } from './support/http';
import { objectGate } from './support/object-gate';
import { quickUser } from './support/world';

vi.setConfig({ testTimeout: 60_000 });

/**
 * Races of the access request rules, each run TRIALS times at once: every run must end in one
 * consistent state (one membership or none, every approval recorded, the request judged wholly
 * by the old rules or wholly by the new). The races share one pool of TRIALS requesters: each race
 * has projects of its own, so a requester asks each project once.
 */
const TRIALS = 50;
/**
 * The rule-change race runs one trial at a time, its order set by a gate in the group's object
 * (support/object-gate.ts): each order (the request first, the change first) from each set of
 * rules to the other.
 */
const RULE_TRIALS = 4;
let trials = 0;
afterAll(() => console.log(`rule races: ${trials} trials`));

const root = api(ADMIN);

const create = async (owner: TestUser, kind: 'groups' | 'projects', body: Record<string, unknown> = {}) => {
  const path = unique('rr');
  const res = await api(owner).post(`/${kind}`, { name: path, path, visibility: 'public', ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: number };
};

const stubOf = (id: number) => env.NAMESPACES.getByName(String(id)) as unknown as DurableObjectStub;

/** The events of one action recorded by a group's or project's object, by the user they are about. */
const eventsOf = (id: number, action: string) =>
  runInDurableObject(stubOf(id), (_i, state) =>
    state.storage.sql
      .exec<{ record: string }>('SELECT record FROM events WHERE action = ?', action)
      .toArray()
      .map((r) => JSON.parse(r.record) as { user: { id: number }; approvals?: { id: number }[] }),
  );

const isMember = async (projectId: number, userId: number) => (await root.get(`/projects/${projectId}/members/${userId}`)).status === 200;

describe('races of the access request rules', () => {
  let owner: TestUser, coOwner: TestUser;
  let groupId: number;
  let requesters: TestUser[];

  beforeAll(async () => {
    [owner, coOwner, ...requesters] = await Promise.all([quickUser('rro'), quickUser('rrc'), ...Array.from({ length: TRIALS }, () => quickUser('rrq'))]);
    groupId = await groupWithTwoOwners();
  });

  /** A group of owner's where coOwner is an Owner too. */
  const groupWithTwoOwners = async () => {
    const { id } = await create(owner, 'groups');
    expect((await api(owner).post(`/groups/${id}/members`, { user_id: coOwner.id, access_level: 50 })).status).toBe(201);
    return id;
  };

  const project = async (rules: Record<string, unknown>, namespaceId = groupId) => {
    const { id } = await create(owner, 'projects', { namespace_id: namespaceId });
    expect((await api(owner).put(`/projects/${id}/access_request_rules`, rules)).status).toBe(200);
    return id;
  };

  it(`two managers approve a two-approval request at once: one membership, both approvals recorded (${TRIALS} trials)`, async () => {
    // Five trees of ten requests each: every change sends the managers their share of its tree.
    const ids = await Promise.all(Array.from({ length: 5 }, async () => project({ approvals_required: 2 }, await groupWithTwoOwners())));
    const asks = requesters.map((r, i) => ({ r, id: ids[i % ids.length] }));
    await Promise.all(asks.map(async ({ r, id }) => expect((await api(r).post(`/projects/${id}/access_requests`)).status).toBe(201)));
    await Promise.all(
      asks.map(async ({ r, id }) => {
        trials++;
        const path = `/projects/${id}/access_requests/${r.id}/approve`;
        const statuses = (await Promise.all([api(owner).put(path), api(coOwner).put(path)])).map((res) => res.status).sort();
        expect(statuses).toEqual([201, 202]);
        expect(await isMember(id, r.id)).toBe(true);
      }),
    );
    const approved = (await Promise.all(ids.map((id) => eventsOf(id, 'approved')))).flat();
    const approvals = (await Promise.all(ids.map((id) => eventsOf(id, 'approval')))).flat();
    for (const r of requesters) {
      const last = approved.filter((e) => e.user.id === r.id);
      expect(last).toHaveLength(1);
      expect(new Set(last[0].approvals?.map((a) => a.id))).toEqual(new Set([owner.id, coOwner.id]));
      expect(approvals.filter((e) => e.user.id === r.id)).toHaveLength(1);
    }
  });

  it(`an approval against the pending expiry: approved or lapsed, never both, by the deadline (${TRIALS} trials)`, async () => {
    const id = await project({ pending_expires_after_days: 1 });
    await Promise.all(requesters.map(async (r) => expect((await api(r).post(`/projects/${id}/access_requests`)).status).toBe(201)));
    const stored = await runInDurableObject(stubOf(id), (_i, state) =>
      state.storage.sql.exec<{ user_id: number; pending_until: string }>('SELECT user_id, pending_until FROM access_requests').toArray(),
    );
    const deadlines = new Map(stored.map((r) => [r.user_id, Date.parse(r.pending_until)]));
    // The clock stops at the median deadline: half have lapsed, half may still be approved.
    const sorted = [...deadlines.values()].sort((a, b) => a - b);
    const at = sorted[Math.floor(TRIALS / 2)];
    clock.now = () => at;
    const results = await Promise.all([runDurableObjectAlarm(stubOf(id)), ...requesters.map((r) => api(owner).put(`/projects/${id}/access_requests/${r.id}/approve`))]);
    for (const [i, r] of requesters.entries()) {
      trials++;
      const res = results[i + 1] as Response;
      const member = await isMember(id, r.id);
      const lapsed = (deadlines.get(r.id) ?? 0) <= at;
      expect(res.status).toBe(lapsed ? 404 : 201);
      expect(member).toBe(!lapsed);
    }
    const expired = await eventsOf(id, 'request_expired');
    for (const r of requesters) expect(expired.filter((e) => e.user.id === r.id).length).toBe((deadlines.get(r.id) ?? 0) <= at ? 1 : 0);
  });

  it(`an auto-approval against a manual deny: a member, no request left, one approval event (${TRIALS} trials)`, async () => {
    const id = await project({ auto_approve: [{ max_access_level: 20 }] });
    await Promise.all(
      requesters.map(async (r) => {
        trials++;
        const [made, denied] = await Promise.all([api(r).post(`/projects/${id}/access_requests`, { access_level: 10 }), api(owner).delete(`/projects/${id}/access_requests/${r.id}`)]);
        expect(made.status).toBe(201);
        expect(((await made.json()) as { approved_by_rule?: string }).approved_by_rule).toBe('auto_approve');
        // The request never waits, so a deny finds nothing to deny.
        expect(denied.status).toBe(404);
        expect(await isMember(id, r.id)).toBe(true);
      }),
    );
    const listed = (await (await api(owner).get(`/projects/${id}/access_requests?per_page=100`)).json()) as unknown[];
    expect(listed).toEqual([]);
    const events = await eventsOf(id, 'auto_approved');
    for (const r of requesters) expect(events.filter((e) => e.user.id === r.id)).toHaveLength(1);
  });

  it(`a rule change against a request in flight: judged wholly by the rules before or wholly by those after, both seen (${RULE_TRIALS} trials)`, async () => {
    // The rules live on the group: the request reads them in the call it makes to its ancestor.
    // Two approvals with a bound of 24 hours (which gives a request without an end one), against
    // one approval and no bound: a mix would be one of each.
    const bounded = { approvals_required: 2, max_duration_hours: 24 };
    const open = { approvals_required: 1, max_duration_hours: null };
    const judgedBy = (record: { approvals_required: number; expires_at: string | null }) =>
      record.approvals_required === 2 && record.expires_at !== null ? bounded : record.approvals_required === 1 && record.expires_at === null ? open : 'a mix';
    const group = (await create(owner, 'groups')).id;
    const { id: projectId } = await create(owner, 'projects', { namespace_id: group });
    const judged: string[] = [];
    for (let trial = 0; trial < RULE_TRIALS; trial++) {
      trials++;
      const r = requesters[trial];
      // Both ways round, from each set of rules to the other.
      const [before, after] = trial % 4 < 2 ? [bounded, open] : [open, bounded];
      const requestFirst = trial % 2 === 0;
      expect((await api(owner).put(`/groups/${group}/access_request_rules`, before)).status).toBe(200);
      // In the group's object the request is held before it reads the rules, the change once it
      // may make it, before its transaction; then one goes on first. The change first: the request
      // reads the rules the moment the change's transaction commits.
      const gate = objectGate(stubOf(group));
      let made: Response, changed: Response;
      try {
        await gate.hold('directMembershipOf', 'before');
        await gate.hold('permitted', 'after');
        const asked = api(r).post(`/projects/${projectId}/access_requests`);
        expect(await Promise.race([gate.held(0).then(() => null), asked.then((res) => res.status)]), 'the request answered before it read the rules').toBeNull();
        const change = api(owner).put(`/groups/${group}/access_request_rules`, after);
        expect(await Promise.race([gate.held(1).then(() => null), change.then((res) => res.status)]), 'the change answered before its transaction').toBeNull();
        if (requestFirst) {
          await gate.release(0);
          await gate.release(1);
        } else {
          await gate.releaseAfterNextTransaction(0);
          await gate.release(1);
        }
        [made, changed] = await Promise.all([asked, change]);
      } finally {
        await gate.open();
      }
      expect(changed.status).toBe(200);
      expect(made.status).toBe(201);
      const record = (await made.json()) as { approvals_required: number; expires_at: string | null };
      expect(judgedBy(record)).toBe(requestFirst ? before : after);
      judged.push(requestFirst ? 'before' : 'after');
      const approved = await api(owner).put(`/projects/${projectId}/access_requests/${r.id}/approve`);
      expect(approved.status).toBe(record.approvals_required === 2 ? 202 : 201);
      expect(await isMember(projectId, r.id)).toBe(record.approvals_required === 1);
    }
    expect(new Set(judged)).toEqual(new Set(['before', 'after']));
  });
});
