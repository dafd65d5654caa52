import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import { advance } from './support/clock';
import { expectError } from './support/contract';
import { runDueAlarms } from './support/storage';
import { admin, as, createGroup, createNestedSource, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';

beforeAll(startWorker, 30_000);

/** `YYYY-MM-DD`, `days` from now (UTC). */
const dateIn = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** Adds `who` at `level` as the administrator, through the members API. */
const addMember = async (kind: string, id: number, who: { id: number }, level: number) => {
  const res = await admin.post(`/${kind}/${id}/members`, { user_id: who.id, access_level: level });
  expect(res.status, await res.clone().text()).toBe(201);
};

const levelIn = async (kind: string, id: number, userId: number) => {
  const all = (await (await admin.get(`/${kind}/${id}/members/all?per_page=100`)).json()) as { id: number; access_level: number }[];
  return all.find((m) => m.id === userId)?.access_level ?? null;
};

describe.each(KIND_ROUTES)('members of %s', (kind) => {
  const notFound = kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found';

  it('adds a member (201, GitLab shape), shows them, and refuses a second add (409)', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    const res = await as(owner).post(`/${kind}/${source.id}/members`, { user_id: bob.id, access_level: 30, expires_at: dateIn(30) });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      id: bob.id,
      username: bob.username,
      name: bob.name,
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `http://knock.test/${bob.username}`,
      access_level: 30,
      created_at: expect.any(String),
      expires_at: dateIn(30),
      created_by: { id: owner.id, username: owner.username, name: owner.name },
    });
    expect(await (await as(bob).get(`/${kind}/${source.id}/members/${bob.id}`)).json()).toMatchObject({ id: bob.id, access_level: 30, expires_at: dateIn(30) });
    expect(await (await as(bob).get(`/${kind}/${source.id}/members/all/${bob.id}`)).json()).toMatchObject({ id: bob.id, access_level: 30, expires_at: dateIn(30) });
    await expectError(await as(owner).post(`/${kind}/${source.id}/members`, { user_id: bob.id, access_level: 20 }), 409, { message: 'Member already exists' });
  });

  it('answers 404 for unknown users and non-members, 400 for bad levels and dates', async () => {
    const [owner, stranger] = await Promise.all([person('own'), person('str')]);
    const source = await createSource(kind, owner);
    const base = `/${kind}/${source.id}/members`;
    await expectError(await as(owner).post(base, { user_id: 987654321, access_level: 30 }), 404, { message: '404 User Not Found' });
    await expectError(await as(owner).get(`${base}/${stranger.id}`), 404, { message: '404 Member Not Found' });
    await expectError(await as(owner).get(`${base}/all/${stranger.id}`), 404, { message: '404 Member Not Found' });
    await expectError(await as(owner).put(`${base}/${stranger.id}`, { access_level: 30 }), 404, { message: '404 Member Not Found' });
    await expectError(await as(owner).delete(`${base}/${stranger.id}`), 404, { message: '404 Member Not Found' });
    await expectError(await as(owner).post(base, { user_id: stranger.id, access_level: 0 }), 400, { error: 'access_level does not have a valid value' });
    expect(await expectError(await as(owner).post(base, { user_id: stranger.id }), 400)).toEqual({ error: expect.stringMatching(/^access_level /) });
    await expectError(await as(owner).post(base, { user_id: stranger.id, access_level: 30, expires_at: '2027-02-30' }), 400, { error: 'expires_at is invalid' });
    await expectError(await as(owner).post(base, { user_id: stranger.id, access_level: 30, expires_at: 'tomorrow' }), 400, { error: 'expires_at is invalid' });
    await expectError(await as(owner).post(base, { user_id: stranger.id, access_level: 30, expires_at: dateIn(-1) }), 400, {
      message: { expires_at: ['cannot be a date in the past'] },
    });
    // Nothing was added by any of these.
    expect(await levelIn(kind, source.id, stranger.id)).toBeNull();
  });

  it('adding a requester removes their pending request in the same step', async () => {
    const [owner, req] = await Promise.all([person('own'), person('req')]);
    const source = await createSource(kind, owner);
    expect((await as(req).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).post(`/${kind}/${source.id}/members`, { user_id: req.id, access_level: 20 })).status).toBe(201);
    const pending = (await (await as(owner).get(`/${kind}/${source.id}/access_requests`)).json()) as { id: number }[];
    expect(pending.map((p) => p.id)).not.toContain(req.id);
    expect(await levelIn(kind, source.id, req.id)).toBe(20);
  });

  it('edits level and expiry; the index follows; removal too', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    await addMember(kind, source.id, bob, 20);
    const res = await as(owner).put(`/${kind}/${source.id}/members/${bob.id}`, { access_level: 40, expires_at: dateIn(10) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: bob.id, access_level: 40, expires_at: dateIn(10) });
    expect(await levelIn(kind, source.id, bob.id)).toBe(40);
    expect(await (await as(owner).put(`/${kind}/${source.id}/members/${bob.id}`, { access_level: 40, expires_at: '' })).json()).toMatchObject({ access_level: 40, expires_at: null });
    const removed = await as(owner).delete(`/${kind}/${source.id}/members/${bob.id}`);
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe('');
    expect(await levelIn(kind, source.id, bob.id)).toBeNull();
    // A removed member sees a public source still, and may ask again.
    expect((await as(bob).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
  });

  // GitLab's `PUT /:id/members/:user_id` requires `access_level` (lib/api/members.rb; "Edit a member
  // of a group or project" in GitLab's members API docs).
  it('refuses an edit without access_level (400), and changes nothing', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource(kind, owner);
    await addMember(kind, source.id, bob, 20);
    await expectError(await as(owner).put(`/${kind}/${source.id}/members/${bob.id}`, { expires_at: dateIn(5) }), 400, { error: 'access_level is missing' });
    await expectError(await as(owner).put(`/${kind}/${source.id}/members/${bob.id}`), 400, { error: 'access_level is missing' });
    expect(await (await as(owner).get(`/${kind}/${source.id}/members/${bob.id}`)).json()).toMatchObject({ access_level: 20, expires_at: null });
  });

  // GitLab's Member validation `higher_access_level_than_group` (app/models/member.rb): a direct
  // membership below the highest one inherited from a group above is refused, on adding, editing
  // and approving alike (`render_validation_error!`, 400).
  it('refuses a direct membership below the one inherited from a group above (400, in GitLab words)', async () => {
    const [owner, dev, late] = await Promise.all([person('own'), person('dev'), person('late')]);
    const source = await createNestedSource(kind, owner);
    const found = (await (await admin.get(`/${kind}/${source.id}`)).json()) as { parent_id?: number; namespace?: { id: number } };
    const parentId = found.parent_id ?? found.namespace!.id;
    const parentName = ((await (await admin.get(`/groups/${parentId}`)).json()) as { name: string }).name;
    const below = (level: string) => ({ message: { access_level: [`should be greater than or equal to ${level} inherited membership from group ${parentName}`] } });
    const members = `/${kind}/${source.id}/members`;
    await addMember('groups', parentId, dev, 30);

    await expectError(await as(owner).post(members, { user_id: dev.id, access_level: 20 }), 400, below('Developer'));
    expect(await (await as(owner).get(`${members}/all/${dev.id}`)).json()).toMatchObject({ access_level: 30 });
    await expectError(await as(owner).get(`${members}/${dev.id}`), 404, { message: '404 Member Not Found' });
    expect((await as(owner).post(members, { user_id: dev.id, access_level: 30 })).status).toBe(201);
    await expectError(await as(owner).put(`${members}/${dev.id}`, { access_level: 10 }), 400, below('Developer'));
    expect(await (await as(owner).put(`${members}/${dev.id}`, { access_level: 40 })).json()).toMatchObject({ access_level: 40 });

    // A request made before its user was given more in the group above.
    expect((await as(late).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    await addMember('groups', parentId, late, 40);
    await expectError(await as(owner).put(`/${kind}/${source.id}/access_requests/${late.id}/approve?access_level=30`), 400, below('Maintainer'));
    expect((await as(owner).put(`/${kind}/${source.id}/access_requests/${late.id}/approve?access_level=40`)).status).toBe(201);
  });

  it('needs a member manager: a Developer gets 403, an outsider of a private one 404', async () => {
    const [owner, dev, other] = await Promise.all([person('own'), person('dev'), person('oth')]);
    const source = await createSource(kind, owner, { visibility: 'private' });
    await addMember(kind, source.id, dev, 30);
    await expectError(await as(dev).post(`/${kind}/${source.id}/members`, { user_id: other.id, access_level: 10 }), 403, { message: '403 Forbidden' });
    await expectError(await as(dev).delete(`/${kind}/${source.id}/members/${owner.id}`), 403, { message: '403 Forbidden' });
    await expectError(await as(other).get(`/${kind}/${source.id}/members/${owner.id}`), 404, { message: notFound });
    await expectError(await as(other).post(`/${kind}/${source.id}/members`, { user_id: other.id, access_level: 10 }), 404, { message: notFound });
  });

  it('lets any member leave; an inherited member is shown by members/all/:user_id at the highest level', async () => {
    const [owner, dev, groupMaintainer] = await Promise.all([person('own'), person('dev'), person('gm')]);
    const source = await createNestedSource(kind, owner);
    const parentId = ((await (await admin.get(`/${kind}/${source.id}`)).json()) as { parent_id?: number; namespace?: { id: number } });
    const parent = parentId.parent_id ?? parentId.namespace!.id;
    // Direct first: once the group gives 40, a direct membership below it is refused.
    await addMember(kind, source.id, groupMaintainer, 20);
    await addMember('groups', parent, groupMaintainer, 40);
    expect(await (await as(dev).get(`/${kind}/${source.id}/members/all/${groupMaintainer.id}`)).json()).toMatchObject({ id: groupMaintainer.id, access_level: 40 });
    await addMember(kind, source.id, dev, 30);
    expect((await as(dev).delete(`/${kind}/${source.id}/members/${dev.id}`)).status).toBe(204);
    expect(await levelIn(kind, source.id, dev.id)).toBeNull();
  });
});

describe('Owners', () => {
  it("a project's Maintainer may neither grant Owner nor touch an Owner", async () => {
    const [owner, maintainer, other] = await Promise.all([person('own'), person('mnt'), person('oth')]);
    const project = await createSource('projects', owner);
    await addMember('projects', project.id, maintainer, 40);
    const base = `/projects/${project.id}/members`;
    await expectError(await as(maintainer).post(base, { user_id: other.id, access_level: 50 }), 403, { message: '403 Forbidden' });
    expect((await as(maintainer).post(base, { user_id: other.id, access_level: 40 })).status).toBe(201);
    await expectError(await as(maintainer).put(`${base}/${other.id}`, { access_level: 50 }), 403, { message: '403 Forbidden' });
    await expectError(await as(maintainer).put(`${base}/${owner.id}`, { access_level: 30 }), 403, { message: '403 Forbidden' });
    await expectError(await as(maintainer).delete(`${base}/${owner.id}`), 403, { message: '403 Forbidden' });
    expect((await as(maintainer).put(`${base}/${other.id}`, { access_level: 20 })).status).toBe(200);
  });

  it("a group's last Owner can neither leave, be removed nor be demoted", async () => {
    const [owner, second] = await Promise.all([person('own'), person('sec')]);
    const group = await createGroup(owner);
    const last = { message: '403 Forbidden - A group must have at least one owner' };
    await expectError(await as(owner).delete(`/groups/${group.id}/members/${owner.id}`), 403, last);
    await expectError(await as(owner).put(`/groups/${group.id}/members/${owner.id}`, { access_level: 40 }), 403, last);
    await expectError(await admin.delete(`/groups/${group.id}/members/${owner.id}`), 403, last);
    await addMember('groups', group.id, second, 50);
    expect((await as(second).put(`/groups/${group.id}/members/${owner.id}`, { access_level: 40 })).status).toBe(200);
    await expectError(await as(second).delete(`/groups/${group.id}/members/${second.id}`), 403, last);
    expect(await levelIn('groups', group.id, second.id)).toBe(50);
  });

  it("a project's Owner may leave it (GitLab keeps the rule for groups)", async () => {
    const owner = await person('own');
    const project = await createSource('projects', owner);
    expect((await as(owner).delete(`/projects/${project.id}/members/${owner.id}`)).status).toBe(204);
  });
});

describe('expiry', () => {
  const stubOf = (id: number) => env.NAMESPACES.getByName(String(id));

  it.each(KIND_ROUTES)('removes a %s member at 00:00 UTC of expires_at, through the alarm and the outbox', async (kind) => {
    const [owner, bob, carol] = await Promise.all([person('own'), person('bob'), person('car')]);
    const source = await createSource(kind, owner);
    const tomorrow = dateIn(1);
    expect((await as(owner).post(`/${kind}/${source.id}/members`, { user_id: bob.id, access_level: 30, expires_at: tomorrow })).status).toBe(201);
    await addMember(kind, source.id, carol, 20);
    await runDueAlarms(stubOf(source.id));
    const alarm = await runInDurableObject(stubOf(source.id), (_i: Namespace, state) => state.storage.getAlarm());
    expect(alarm).toBe(Date.parse(`${tomorrow}T00:00:00Z`));
    // Before the day starts, the alarm removes nobody.
    expect(await runDurableObjectAlarm(stubOf(source.id))).toBe(true);
    expect(await levelIn(kind, source.id, bob.id)).toBe(30);

    advance((Date.parse(`${tomorrow}T00:00:00Z`) - Date.now()) / 1000 + 1);
    expect(await runDurableObjectAlarm(stubOf(source.id))).toBe(true);
    const direct = (await (await admin.get(`/${kind}/${source.id}/members`)).json()) as { id: number }[];
    expect(direct.map((m) => m.id)).not.toContain(bob.id);
    expect(direct.map((m) => m.id)).toContain(carol.id);
    expect(await levelIn(kind, source.id, bob.id)).toBeNull();
    await runDueAlarms(stubOf(source.id));
    expect(await runInDurableObject(stubOf(source.id), (_i: Namespace, state) => state.storage.getAlarm())).toBeNull();
    // An expired member may ask again.
    expect((await as(bob).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
  });

  it('an approval may carry expires_at (query or JSON body); the earliest expiry sets the alarm', async () => {
    const [owner, a, b] = await Promise.all([person('own'), person('a'), person('b')]);
    const group = await createGroup(owner);
    for (const u of [a, b]) expect((await as(u).post(`/groups/${group.id}/access_requests`)).status).toBe(201);
    const viaQuery = await as(owner).put(`/groups/${group.id}/access_requests/${a.id}/approve?access_level=30&expires_at=${dateIn(5)}`);
    expect(viaQuery.status).toBe(201);
    expect(await viaQuery.json()).toMatchObject({ access_level: 30, expires_at: dateIn(5) });
    const viaBody = await as(owner).put(`/groups/${group.id}/access_requests/${b.id}/approve`, { access_level: 20, expires_at: dateIn(2) });
    expect(await viaBody.json()).toMatchObject({ access_level: 20, expires_at: dateIn(2) });
    await runDueAlarms(stubOf(group.id));
    // The alarm wakes a day before the earliest expiry, to warn the member (`expiring`).
    expect(await runInDurableObject(stubOf(group.id), (_i: Namespace, state) => state.storage.getAlarm())).toBe(Date.parse(`${dateIn(2)}T00:00:00Z`) - 86_400_000);
    await expectError(await as(owner).put(`/groups/${group.id}/access_requests/${a.id}/approve?expires_at=2020-01-01`), 400, {
      message: { expires_at: ['cannot be a date in the past'] },
    });
  });

  // GitLab's FutureDateValidator (app/validators/future_date_validator.rb) refuses only a date
  // before today, and today is allowed (GitLab issue 12702). "From that date onward, the user can
  // no longer access the project" (GitLab's project members docs): a membership that ends today has
  // ended, and is removed as GitLab's expiry job (RemoveExpiredMembersWorker) removes it that day.
  it.each(KIND_ROUTES)('takes an expiry of today on %s: add, change and approve answer, and the membership has already ended', async (kind) => {
    const [owner, bob, carol, dave] = await Promise.all([person('own'), person('bob'), person('car'), person('dav')]);
    const source = await createSource(kind, owner);
    const today = dateIn(0);
    const added = await as(owner).post(`/${kind}/${source.id}/members`, { user_id: bob.id, access_level: 30, expires_at: today });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ id: bob.id, access_level: 30, expires_at: today });
    await addMember(kind, source.id, carol, 20);
    const changed = await as(owner).put(`/${kind}/${source.id}/members/${carol.id}`, { access_level: 20, expires_at: today });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ id: carol.id, expires_at: today });
    expect((await as(dave).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
    const approved = await as(owner).put(`/${kind}/${source.id}/access_requests/${dave.id}/approve?expires_at=${today}`);
    expect(approved.status).toBe(201);
    expect(await approved.json()).toMatchObject({ id: dave.id, expires_at: today });

    for (const who of [bob, carol, dave]) {
      await expectError(await as(owner).get(`/${kind}/${source.id}/members/${who.id}`), 404, { message: '404 Member Not Found' });
      expect(await levelIn(kind, source.id, who.id)).toBeNull();
    }
    const events = (await (await as(owner).get(`/${kind}/${source.id}/audit_events?per_page=100`)).json()) as { event_name: string; details: { target_id: number } }[];
    const expired = events.filter((e) => e.event_name === 'member_expired').map((e) => e.details.target_id);
    expect(expired.sort()).toEqual([bob.id, carol.id, dave.id].sort());
    // The day before is still refused, with GitLab's words.
    await expectError(await as(owner).post(`/${kind}/${source.id}/members`, { user_id: bob.id, access_level: 30, expires_at: dateIn(-1) }), 400, {
      message: { expires_at: ['cannot be a date in the past'] },
    });
  });

  it('an expired member is gone for every rule even before the alarm runs', async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const group = await createGroup(owner, { visibility: 'private' });
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: bob.id, access_level: 50, expires_at: dateIn(3) })).status).toBe(201);
    expect((await as(bob).get(`/groups/${group.id}`)).status).toBe(200);
    advance(4 * 86_400);
    await expectError(await as(bob).get(`/groups/${group.id}/members`), 404, { message: '404 Group Not Found' });
    expect(await levelIn('groups', group.id, bob.id)).toBeNull();
  });
});
