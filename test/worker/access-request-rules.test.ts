import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { ADMIN, call, unique } from './support/http';
import { admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';
import { Receiver, settle } from './support/receiver';
import { runDueAlarms } from './support/storage';

/**
 * Access requests that say why, which level and until when, and the rules of a group or project
 * that decide them (`…/access_request_rules`): required reasons, bounded durations, several
 * approvals, pending requests that expire, auto-approval, break-glass, and memberships that end
 * at a minute and warn before they do.
 */

const stubOf = (id: number) => env.NAMESPACES.getByName(String(id)) as unknown as DurableObjectStub;
const HOUR = 3_600_000;

/** An end `hours` from now, to the minute, in the form Knock keeps it. */
const endIn = (hours: number) => `${new Date(Math.floor((Date.now() + hours * HOUR) / 60_000) * 60_000).toISOString().slice(0, 16)}:00.000Z`;
const dateIn = (days: number) => new Date(Date.now() + days * 24 * HOUR).toISOString().slice(0, 10);

/** A user with an email address (for auto-approve's `email_domain`). */
const personWithEmail = async (prefix: string, domain: string): Promise<Person> => {
  const username = unique(prefix);
  const created = await admin.post('/users', { username, name: `Name ${username}`, email: `${username}@${domain}`, password: 'correct horse battery' });
  const user = (await created.json()) as { id: number };
  const { token } = (await (await admin.post(`/users/${user.id}/impersonation_tokens`, { name: 't', scopes: ['api'] })).json()) as { token: string };
  return { id: user.id, username, name: `Name ${username}`, headers: { 'PRIVATE-TOKEN': token } };
};

const auditActions = async (path: string, userId: number) => {
  const events = (await (await admin.get(`${path}/audit_events?per_page=100`)).json()) as { details: { action: string; target_id: number; reason?: string } }[];
  return events.filter((e) => e.details.target_id === userId).map((e) => e.details);
};

const ownRequest = async (who: Person, sourceId: number) => {
  const mine = (await (await as(who).get('/user/access_requests')).json()) as Record<string, unknown>[];
  return mine.find((r) => r.source_id === sourceId);
};

const levelOf = async (path: string, userId: number) => {
  const res = await admin.get(`${path}/members/${userId}`);
  return res.status === 200 ? ((await res.json()) as { access_level: number; expires_at: string | null }) : null;
};

describe('what a request carries', () => {
  let owner: Person;
  let project: { id: number };
  beforeAll(async () => {
    await startWorker();
    owner = await person('own');
    const group = await createGroup(owner);
    project = await createProject(owner, { namespace_id: group.id });
  }, 30_000);

  it('takes reason, level and a date-time end; the list, the inbox and the requester see them; approve defaults to them', async () => {
    const bob = await person('bob');
    const end = endIn(8);
    const made = await as(bob).post(`/projects/${project.id}/access_requests`, { reason: 'to fix the release', access_level: 30, expires_at: end.slice(0, 16) + 'Z' });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({ id: bob.id, reason: 'to fix the release', access_level: 30, expires_at: end, approvals_required: 1, approvals: [] });
    const listed = (await (await as(owner).get(`/projects/${project.id}/access_requests`)).json()) as Record<string, unknown>[];
    expect(listed.find((r) => r.id === bob.id)).toMatchObject({ reason: 'to fix the release', access_level: 30, expires_at: end });
    const inbox = (await (await as(owner).get('/access_requests?per_page=100')).json()) as Record<string, unknown>[];
    expect(inbox.find((r) => r.id === bob.id && r.source_id === project.id)).toMatchObject({ reason: 'to fix the release', access_level: 30, expires_at: end });
    expect(await ownRequest(bob, project.id)).toMatchObject({ status: 'pending', reason: 'to fix the release', requested_access_level: 30, requested_expires_at: end });

    const approved = await as(owner).put(`/projects/${project.id}/access_requests/${bob.id}/approve`);
    expect(approved.status).toBe(201);
    expect(await approved.json()).toMatchObject({ id: bob.id, access_level: 30, expires_at: end });
    expect(await ownRequest(bob, project.id)).toMatchObject({ status: 'approved', access_level: 30, expires_at: end, decided_by: owner.id });

    // The membership ends at its minute, not at the next midnight.
    advance((Date.parse(end) - Date.now()) / 1000 - 60);
    await runDueAlarms(stubOf(project.id));
    expect(await levelOf(`/projects/${project.id}`, bob.id)).toMatchObject({ access_level: 30 });
    advance((Date.parse(end) - Date.now()) / 1000 + 1);
    await runDueAlarms(stubOf(project.id));
    expect(await levelOf(`/projects/${project.id}`, bob.id)).toBeNull();
    const actions = (await auditActions(`/projects/${project.id}`, bob.id)).map((d) => d.action);
    expect(actions).toEqual(expect.arrayContaining(['requested', 'approved', 'expiring', 'expired']));
    expect(await ownRequest(bob, project.id)).toMatchObject({ status: 'expired' });
  });

  it('the approver may change level and end; a plain request stays as GitLab has it (Developer, no end)', async () => {
    const [carol, dave] = await Promise.all([person('car'), person('dav')]);
    await as(carol).post(`/projects/${project.id}/access_requests`, { access_level: 40, expires_at: dateIn(30) });
    const changed = await as(owner).put(`/projects/${project.id}/access_requests/${carol.id}/approve`, { access_level: 20, expires_at: dateIn(3) });
    expect(await changed.json()).toMatchObject({ access_level: 20, expires_at: dateIn(3) });
    await as(dave).post(`/projects/${project.id}/access_requests`);
    expect(await (await as(owner).put(`/projects/${project.id}/access_requests/${dave.id}/approve`)).json()).toMatchObject({ access_level: 30, expires_at: null });
  });

  it('refuses what is malformed with GitLab-shaped errors', async () => {
    const erin = await person('eri');
    const post = (body: unknown) => as(erin).post(`/projects/${project.id}/access_requests`, body);
    expect((await post({ reason: 'x'.repeat(1001) })).status).toBe(400);
    expect(await (await post({ access_level: 99 })).json()).toEqual({ error: 'access_level does not have a valid value' });
    expect(await (await post({ expires_at: '2027-01-01T25:00' })).json()).toEqual({ error: 'expires_at is invalid' });
    expect(await (await post({ expires_at: '2020-01-01T10:00Z' })).json()).toEqual({ message: { expires_at: ['cannot be a date in the past'] } });
    expect((await post({ reason: 'x'.repeat(1000) })).status).toBe(201);
  });

  // One rule for every end a request, an approval or a membership takes: GitLab's
  // FutureDateValidator (app/validators/future_date_validator.rb) refuses a date before today and
  // takes today (GitLab issue 12702); a date-time must be after now.
  it('takes an end of today, as a membership takes it, and refuses the day before and a date-time already past', async () => {
    const [gina, hal, ivy] = await Promise.all([person('gin'), person('hal'), person('ivy')]);
    const ask = (who: Person, expires_at: string) => as(who).post(`/projects/${project.id}/access_requests`, { expires_at });
    const made = await ask(gina, dateIn(0));
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({ id: gina.id, expires_at: dateIn(0) });
    const past = { message: { expires_at: ['cannot be a date in the past'] } };
    expect(await (await ask(hal, dateIn(-1))).json()).toEqual(past);
    expect(await (await ask(ivy, endIn(-1).slice(0, 16) + 'Z')).json()).toEqual(past);
  });

  it('a denial carries a reason the requester sees, with who and when', async () => {
    const frank = await person('fra');
    await as(frank).post(`/projects/${project.id}/access_requests?reason=please`);
    expect((await as(owner).delete(`/projects/${project.id}/access_requests/${frank.id}?reason=${encodeURIComponent('not this quarter')}`)).status).toBe(204);
    expect(await ownRequest(frank, project.id)).toMatchObject({
      status: 'denied',
      reason: 'please',
      denial_reason: 'not this quarter',
      decided_by: owner.id,
      decided_at: expect.any(String),
    });
    expect(await auditActions(`/projects/${project.id}`, frank.id)).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'denied', reason: 'not this quarter' })]));
  });
});

describe('rules', () => {
  let owner: Person, maintainer: Person;
  let group: { id: number; full_path: string };
  let project: { id: number };
  const rulesOf = async (path: string) => (await admin.get(`${path}/access_request_rules`)).json();

  beforeAll(async () => {
    [owner, maintainer] = await Promise.all([person('own'), person('mnt')]);
    group = await createGroup(owner);
    project = await createProject(owner, { namespace_id: group.id });
    await as(maintainer).post(`/projects/${project.id}/access_requests`);
    await as(owner).put(`/projects/${project.id}/access_requests/${maintainer.id}/approve?access_level=40`);
  }, 30_000);

  it('are read by anyone who may see it, set by who edits settings, inherited down the tree, overridden by a project', async () => {
    const none = await rulesOf(`/projects/${project.id}`);
    expect(none).toEqual({ reason_required: false, max_duration_hours: null, pending_expires_after_days: null, approvals_required: 1, auto_approve: [], break_glass: null, inherited_from: null });
    const dev = await person('dev');
    expect((await as(dev).put(`/groups/${group.id}/access_request_rules`, { reason_required: true })).status).toBe(403);
    const set = await as(owner).put(`/groups/${group.id}/access_request_rules`, { reason_required: true, approvals_required: 2 });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ reason_required: true, approvals_required: 2, inherited_from: null });
    expect(await (await as(dev).get(`/projects/${project.id}/access_request_rules`)).json()).toMatchObject({ reason_required: true, approvals_required: 2, inherited_from: group.full_path });
    // A Maintainer of the project sets its own; they override the group's.
    expect((await as(maintainer).put(`/projects/${project.id}/access_request_rules`, { max_duration_hours: 24 })).status).toBe(200);
    expect(await rulesOf(`/projects/${project.id}`)).toMatchObject({ reason_required: false, approvals_required: 1, max_duration_hours: 24, inherited_from: null });
    expect((await as(maintainer).delete(`/projects/${project.id}/access_request_rules`)).status).toBe(200);
    expect(await rulesOf(`/projects/${project.id}`)).toMatchObject({ reason_required: true, inherited_from: group.full_path });
    expect((await as(owner).delete(`/groups/${group.id}/access_request_rules`)).status).toBe(200);
    const changes = (await auditActions(`/groups/${group.id}`, group.id)).filter((d) => d.action === 'settings_changed');
    expect(changes.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses malformed rules', async () => {
    const put = (body: unknown) => as(owner).put(`/groups/${group.id}/access_request_rules`, body);
    for (const body of [
      { approvals_required: 4 },
      { approvals_required: 0 },
      { max_duration_hours: 0 },
      { auto_approve: [{ email_domain: 'not a domain' }] },
      { auto_approve: [{ max_access_level: 33 }] },
      { break_glass: { access_level: 40 } },
      { reason_required: 'yes' },
    ]) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await (await put({ auto_approve: [{ member_of: 'no/such/group' }] })).json()).toEqual({ message: { member_of: ['group no/such/group not found'] } });
  });

  /** A fresh group and project with `rules` on the group. */
  const ruled = async (rules: Record<string, unknown>) => {
    const g = await createGroup(owner);
    const p = await createProject(owner, { namespace_id: g.id });
    expect((await as(owner).put(`/groups/${g.id}/access_request_rules`, rules)).status).toBe(200);
    return { group: g, project: p };
  };

  it('reason_required and max_duration_hours bound what is asked and what is approved', async () => {
    const { project: p } = await ruled({ reason_required: true, max_duration_hours: 24 });
    const [bob, carol] = await Promise.all([person('bob'), person('car')]);
    expect(await (await as(bob).post(`/projects/${p.id}/access_requests`)).json()).toEqual({ message: { reason: ["can't be blank"] } });
    expect(await (await as(bob).post(`/projects/${p.id}/access_requests`, { reason: 'r', expires_at: endIn(48) })).json()).toEqual({
      message: { expires_at: ['must be within 24 hours'] },
    });
    // Without an end, the longest the rules allow.
    const made = (await (await as(bob).post(`/projects/${p.id}/access_requests`, { reason: 'r' })).json()) as { expires_at: string };
    expect(Date.parse(made.expires_at)).toBeGreaterThan(Date.now() + 23 * HOUR);
    expect(Date.parse(made.expires_at)).toBeLessThanOrEqual(Date.now() + 24 * HOUR);
    expect(await (await as(owner).put(`/projects/${p.id}/access_requests/${bob.id}/approve`, { expires_at: dateIn(30) })).json()).toEqual({
      message: { expires_at: ['must be within 24 hours'] },
    });
    expect((await as(owner).put(`/projects/${p.id}/access_requests/${bob.id}/approve`)).status).toBe(201);
    // A request made under the rules keeps them: dropping the rule later does not loosen it.
    await as(carol).post(`/projects/${p.id}/access_requests`, { reason: 'r' });
    expect((await admin.put(`/projects/${p.id}/access_request_rules`, {})).status).toBe(200);
    expect((await as(owner).put(`/projects/${p.id}/access_requests/${carol.id}/approve`, { expires_at: dateIn(30) })).status).toBe(400);
  });

  it('approvals_required counts distinct managers: 202 with the approvals until the last, then 201', async () => {
    const { group: g, project: p } = await ruled({});
    const bob = await person('bob');
    await as(maintainer).post(`/groups/${g.id}/access_requests`);
    await as(owner).put(`/groups/${g.id}/access_requests/${maintainer.id}/approve?access_level=50`);
    expect((await as(owner).put(`/projects/${p.id}/access_request_rules`, { approvals_required: 2 })).status).toBe(200);
    const made = await as(bob).post(`/projects/${p.id}/access_requests`, { reason: 'release' });
    expect(await made.json()).toMatchObject({ approvals_required: 2, approvals: [] });
    const first = await as(owner).put(`/projects/${p.id}/access_requests/${bob.id}/approve`);
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ id: bob.id, approvals_required: 2, approvals: [{ id: owner.id, username: owner.username, approved_at: expect.any(String) }] });
    expect(await levelOf(`/projects/${p.id}`, bob.id)).toBeNull();
    expect(await (await as(owner).put(`/projects/${p.id}/access_requests/${bob.id}/approve`)).json()).toEqual({ message: 'You have already approved this access request' });
    const inbox = (await (await as(maintainer).get('/access_requests?per_page=100')).json()) as Record<string, unknown>[];
    expect(inbox.find((r) => r.id === bob.id && r.source_id === p.id)).toMatchObject({ approvals: [{ id: owner.id }] });
    const listed = (await (await as(maintainer).get(`/projects/${p.id}/access_requests`)).json()) as Record<string, unknown>[];
    expect(listed).toEqual([expect.objectContaining({ id: bob.id, approvals: [expect.objectContaining({ id: owner.id, username: owner.username })] })]);
    const second = await as(maintainer).put(`/projects/${p.id}/access_requests/${bob.id}/approve`);
    expect(second.status).toBe(201);
    expect(await second.json()).toMatchObject({ id: bob.id, access_level: 30 });
    const events = await auditActions(`/projects/${p.id}`, bob.id);
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['approval', 'approved']));
  });

  it('pending_expires_after_days: an undecided request expires, with an event, and the requester sees it lapsed', async () => {
    const { project: p } = await ruled({ pending_expires_after_days: 2 });
    const bob = await person('bob');
    await as(bob).post(`/projects/${p.id}/access_requests`);
    advance(2 * 24 * 3600 + 1);
    await runDueAlarms(stubOf(p.id));
    expect((await as(owner).put(`/projects/${p.id}/access_requests/${bob.id}/approve`)).status).toBe(404);
    expect(await ownRequest(bob, p.id)).toMatchObject({ status: 'lapsed' });
    expect((await auditActions(`/projects/${p.id}`, bob.id)).map((e) => e.action)).toContain('request_expired');
  });

  it('auto_approve: an entry whose fields all hold approves at once, by the rule; others wait', async () => {
    const staff = await createGroup(owner);
    const domain = `${unique('acme')}.test`;
    const { project: p } = await ruled({ auto_approve: [{ email_domain: domain, max_access_level: 20, max_duration_hours: 168 }, { member_of: staff.full_path, max_access_level: 30 }] });
    const [inside, outside, member] = await Promise.all([personWithEmail('in', domain), personWithEmail('out', 'elsewhere.test'), person('stf')]);
    const auto = await as(inside).post(`/projects/${p.id}/access_requests`);
    expect(auto.status).toBe(201);
    const granted = (await auto.json()) as { access_level: number; expires_at: string; approved_by_rule: string };
    expect(granted).toMatchObject({ id: inside.id, access_level: 20, approved_by_rule: 'auto_approve' });
    expect(Date.parse(granted.expires_at)).toBeLessThanOrEqual(Date.now() + 168 * HOUR);
    expect(Date.parse(granted.expires_at)).toBeGreaterThan(Date.now() + 167 * HOUR);
    expect(await levelOf(`/projects/${p.id}`, inside.id)).toMatchObject({ access_level: 20 });
    expect(await ownRequest(inside, p.id)).toMatchObject({ status: 'approved', decided_by: null });
    // Asking above the entry's level: it waits.
    const above = await personWithEmail('ab', domain);
    expect(await (await as(above).post(`/projects/${p.id}/access_requests`, { access_level: 30 })).json()).toMatchObject({ approvals_required: 1 });
    expect(await (await as(outside).post(`/projects/${p.id}/access_requests`)).json()).toMatchObject({ approvals: [] });
    // A member of the named group.
    await as(member).post(`/groups/${staff.id}/access_requests`);
    await as(owner).put(`/groups/${staff.id}/access_requests/${member.id}/approve?access_level=10`);
    expect(await (await as(member).post(`/projects/${p.id}/access_requests`)).json()).toMatchObject({ access_level: 30, approved_by_rule: 'auto_approve' });
    const events = await auditActions(`/projects/${p.id}`, inside.id);
    expect(events.map((e) => e.action)).toContain('auto_approved');
  });

  it('break_glass: grants at once with a reason and an end within the rule, alerts by an event, ends by itself; 403 without the rule', async () => {
    const plain = await createProject(owner);
    const bob = await person('bob');
    expect((await as(bob).post(`/projects/${plain.id}/access_requests`, { break_glass: true, reason: 'outage' })).status).toBe(403);
    const { group: g, project: p } = await ruled({ break_glass: { access_level: 40, max_duration_hours: 1 } });
    const receiver = new Receiver();
    expect((await as(owner).post(`/groups/${g.id}/hooks`, { url: 'https://hooks.example.com/owners', member_events: true })).status).toBe(201);
    expect(await (await as(bob).post(`/projects/${p.id}/access_requests`, { break_glass: true })).json()).toEqual({ message: { reason: ["can't be blank"] } });
    expect((await as(bob).post(`/projects/${p.id}/access_requests`, { break_glass: true, reason: 'outage', expires_at: endIn(3) })).status).toBe(400);
    const opened = await as(bob).post(`/projects/${p.id}/access_requests`, { break_glass: 'true', reason: 'outage' });
    expect(opened.status).toBe(201);
    expect(await opened.json()).toMatchObject({ id: bob.id, access_level: 40, approved_by_rule: 'break_glass', reason: 'outage' });
    const events = await auditActions(`/projects/${p.id}`, bob.id);
    expect(events).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'break_glass', reason: 'outage' })]));
    // Copied up to the group, whose Owners' hooks hear of it.
    await settle(p.id, g.id);
    expect((await auditActions(`/groups/${g.id}`, bob.id)).map((e) => e.action)).toContain('break_glass');
    expect(receiver.received.map((d) => d.json)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_name: 'user_add_to_team', action: 'break_glass', user_id: bob.id, access_level: 'Maintainer', reason: 'outage', actor: expect.objectContaining({ id: bob.id }) }),
      ]),
    );
    advance(3601);
    await runDueAlarms(stubOf(p.id));
    expect(await levelOf(`/projects/${p.id}`, bob.id)).toBeNull();
  });
});

describe('access that ends by itself', () => {
  it('warns a day before a date end, and the member may ask to extend at their current level', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const group = await createGroup(owner);
    await as(bob).post(`/groups/${group.id}/access_requests`, { access_level: 20, expires_at: dateIn(3) });
    await as(owner).put(`/groups/${group.id}/access_requests/${bob.id}/approve`);
    await runDueAlarms(stubOf(group.id));
    expect((await auditActions(`/groups/${group.id}`, bob.id)).map((e) => e.action)).not.toContain('expiring');
    advance((Date.parse(`${dateIn(3)}T00:00:00Z`) - Date.now()) / 1000 - 23 * 3600);
    await runDueAlarms(stubOf(group.id));
    expect((await auditActions(`/groups/${group.id}`, bob.id)).map((e) => e.action)).toContain('expiring');

    // Another level than the current one is refused; the current one is carried.
    expect((await as(bob).post(`/groups/${group.id}/access_requests`, { access_level: 30, expires_at: dateIn(30) })).status).toBe(400);
    const extend = await as(bob).post(`/groups/${group.id}/access_requests`, { expires_at: dateIn(30), reason: 'still needed' });
    expect(extend.status).toBe(201);
    expect(await extend.json()).toMatchObject({ access_level: 20, expires_at: dateIn(30) });
    expect((await as(owner).put(`/groups/${group.id}/access_requests/${bob.id}/approve`)).status).toBe(201);
    expect(await levelOf(`/groups/${group.id}`, bob.id)).toMatchObject({ access_level: 20, expires_at: dateIn(30) });
  });

  it('a member without an end may not ask again (403, as GitLab)', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const group = await createGroup(owner);
    await as(bob).post(`/groups/${group.id}/access_requests`);
    await as(owner).put(`/groups/${group.id}/access_requests/${bob.id}/approve`);
    expect((await as(bob).post(`/groups/${group.id}/access_requests`, { expires_at: dateIn(30) })).status).toBe(403);
    expect((await call(`/api/v4/groups/${group.id}/access_request_rules`, { headers: ADMIN })).status).toBe(200);
  });
});

describe("a manager's alerts (GET /user/access_alerts)", () => {
  type Alert = { action: string; source_id: number; source_type: string; user: { id: number; username: string }; access_level: number; expires_at: string | null; reason: string | null };
  const alertsOf = async (who: Person) => {
    const res = await as(who).get('/user/access_alerts');
    expect(res.status).toBe(200);
    return (await res.json()) as Alert[];
  };

  it('tells every Owner of a break-glass grant below their group, not a Maintainer nor the one who broke the glass', async () => {
    const [owner, coOwner, maintainer, bob] = await Promise.all([person('own'), person('cown'), person('mnt'), person('bob')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await as(owner).post(`/groups/${group.id}/members`, { user_id: coOwner.id, access_level: 50 });
    await as(owner).post(`/projects/${project.id}/members`, { user_id: maintainer.id, access_level: 40 });
    await as(owner).put(`/groups/${group.id}/access_request_rules`, { break_glass: { access_level: 40, max_duration_hours: 1 } });
    expect((await as(bob).post(`/projects/${project.id}/access_requests`, { break_glass: true, reason: 'outage' })).status).toBe(201);

    const breakGlass = expect.objectContaining({ action: 'break_glass', source_id: project.id, source_type: 'Project', user: expect.objectContaining({ id: bob.id, username: bob.username }), access_level: 40, reason: 'outage' });
    // An hour's access is also about to end: its managers hear that too (the Maintainer as well).
    const expiring = expect.objectContaining({ action: 'expiring', source_id: project.id, user: expect.objectContaining({ id: bob.id }) });
    for (const who of [owner, coOwner]) expect(await alertsOf(who)).toEqual(expect.arrayContaining([breakGlass, expiring]));
    expect(await alertsOf(maintainer)).toEqual([expiring]);
    expect(await alertsOf(bob)).toEqual([]);
    // A day later it is no longer news (and the grant ended long before).
    advance(25 * 3600);
    expect(await alertsOf(owner)).toEqual([]);
  });

  it("tells the managers of a member's access that ends within the hour, not before, and not the member", async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const group = await createGroup(owner);
    const end = endIn(3);
    await as(bob).post(`/groups/${group.id}/access_requests`, { access_level: 20, expires_at: end });
    expect((await as(owner).put(`/groups/${group.id}/access_requests/${bob.id}/approve`)).status).toBe(201);
    expect(await alertsOf(owner)).toEqual([]);
    advance((Date.parse(end) - Date.now()) / 1000 - 30 * 60);
    expect(await alertsOf(owner)).toEqual([expect.objectContaining({ action: 'expiring', source_id: group.id, source_type: 'Namespace', user: expect.objectContaining({ id: bob.id }), access_level: 20, expires_at: end })]);
    expect(await alertsOf(bob)).toEqual([]);
  });
});
