// Rules that read state, wait for another object, and then write: what they read before the wait
// must not decide the write when another call changed it meanwhile. Each race is ordered by a gate
// in the object (support/object-gate.ts), so the interleaving happens every time.
import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { unique } from './support/http';
import { objectGate } from './support/object-gate';
import { admin, as, createGroup, createProject, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';
import { Receiver, settle } from './support/receiver';

beforeAll(startWorker, 30_000);

describe.each(KIND_ROUTES)('stale reads on %s', (kind) => {
  it('an approval without a level grants the level the pending request asks, though it was withdrawn and asked again at another level while the approval waited', async () => {
    const [owner, requester] = await Promise.all([person('own'), person('req')]);
    const source = await createSource(kind, owner);
    const requests = `/${kind}/${source.id}/access_requests`;
    expect((await as(requester).post(requests, { access_level: 30 })).status).toBe(201);

    const gate = objectGate(env.NAMESPACES.getByName(String(source.id)) as unknown as DurableObjectStub);
    let approved: Response;
    try {
      // The approval reads the level asked (Developer) and is held once it knows where its caller stands.
      await gate.hold('standing', 'after');
      const approval = as(owner).put(`${requests}/${requester.id}/approve`);
      await gate.held(0);
      // Meanwhile the requester withdraws and asks again, for Guest.
      const withdrawal = as(requester).delete(`${requests}/${requester.id}`);
      await gate.held(1);
      await gate.release(1);
      expect((await withdrawal).status).toBe(204);
      expect((await as(requester).post(requests, { access_level: 10 })).status).toBe(201);
      // The approval goes on, ungated from here.
      await gate.open();
      approved = await approval;
    } finally {
      await gate.open();
    }
    expect(approved.status).toBe(201);
    expect(((await approved.json()) as { access_level: number }).access_level).toBe(10);
    const members = (await (await as(owner).get(`/${kind}/${source.id}/members`)).json()) as { id: number; access_level: number }[];
    expect(members.find((m) => m.id === requester.id)?.access_level).toBe(10);
  });
});

describe.each(KIND_ROUTES)('webhooks of %s', (kind) => {
  it("two edits of one hook at once: a new name does not undo the other edit's new URL (and the token it dropped)", async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const hooks = `/${kind}/${source.id}/hooks`;
    const created = await as(owner).post(hooks, { url: 'https://hooks.example.com/old', token: 'old-token' });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };

    const gate = objectGate(env.NAMESPACES.getByName(String(source.id)) as unknown as DurableObjectStub);
    let renamed: Response;
    try {
      // Each edit is held just before its transaction, the renaming first.
      await gate.hold('mutate', 'before');
      const renaming = as(owner).put(`${hooks}/${id}`, { name: 'Renamed' });
      await gate.held(0);
      const moving = as(owner).put(`${hooks}/${id}`, { url: 'https://hooks.example.com/new' });
      await gate.held(1);
      await gate.release(1);
      expect((await moving).status).toBe(200);
      await gate.open();
      renamed = await renaming;
    } finally {
      await gate.open();
    }
    expect(renamed.status).toBe(200);
    expect(await (await as(owner).get(`${hooks}/${id}`)).json()).toMatchObject({ url: 'https://hooks.example.com/new', name: 'Renamed' });
    const receiver = new Receiver();
    expect((await as(owner).post(`${hooks}/${id}/test`)).status).toBe(201);
    expect(receiver.received.map((d) => [d.url, d.headers['x-gitlab-token']])).toEqual([['https://hooks.example.com/new', undefined]]);
  });
});

describe('a webhook edited while a delivery to its old URL is under way', () => {
  it("the old URL's failure neither counts against the edited hook nor puts its retry off: it goes to the new URL at once", async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const source = await createSource('groups', owner);
    const hooks = `/groups/${source.id}/hooks`;
    const created = await as(owner).post(hooks, { url: 'https://hooks.example.com/broken', member_events: true });
    const { id } = (await created.json()) as { id: number };
    await settle(source.id);
    // The old URL answers 500, once the test lets it.
    const receiver = new Receiver();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let arrived!: () => void;
    const attempted = new Promise<void>((resolve) => (arrived = resolve));
    receiver.respond = async (d) => {
      if (!d.url.endsWith('/broken')) return new Response('ok');
      arrived();
      await answered;
      return new Response('down', { status: 500 });
    };
    expect((await as(owner).post(`/groups/${source.id}/members`, { user_id: bob.id, access_level: 30 })).status).toBe(201);
    const object = env.NAMESPACES.getByName(String(source.id)) as unknown as DurableObjectStub;
    const delivering = runDurableObjectAlarm(object);
    await attempted;
    // The owner fixes the hook meanwhile.
    expect((await as(owner).put(`${hooks}/${id}`, { url: 'https://hooks.example.com/fixed' })).status).toBe(200);
    answer();
    await delivering;
    expect(await (await as(owner).get(`${hooks}/${id}`)).json()).toMatchObject({ url: 'https://hooks.example.com/fixed', alert_status: 'executable', disabled_until: null });
    await settle(source.id);
    expect(receiver.received.map((d) => [d.url, d.json.event_name])).toEqual([
      ['https://hooks.example.com/broken', 'user_add_to_group'],
      ['https://hooks.example.com/fixed', 'user_add_to_group'],
    ]);
    // The failed attempt is logged with the URL it went to.
    const log = (await (await as(owner).get(`${hooks}/${id}/events`)).json()) as { url: string; response_status: string }[];
    expect(log.map((l) => [l.url, l.response_status])).toEqual([
      ['https://hooks.example.com/fixed', '200'],
      ['https://hooks.example.com/broken', '500'],
    ]);
  });
});

describe('signing keys', () => {
  it("a rotation that withdraws every key, made while the first key was being made, leaves its own key alone in the JWKS", async () => {
    // An instance of this test's own: the deployment's keys (`keys`) stay as they are.
    const keys = env.SIGNING_KEYS.getByName(unique('keys'));
    const gate = objectGate(keys as unknown as DurableObjectStub);
    let rotated: { kid: string }[];
    try {
      // The first read makes the first key, and is held once it is made, before it is stored.
      await gate.hold('makeKey', 'after');
      const first = keys.published();
      await gate.held(0);
      // Meanwhile an operator rotates after a leak: its key is made and stored.
      const rotation = keys.rotateNow(true);
      await gate.held(1);
      await gate.release(1);
      await gate.open();
      await first;
      rotated = await rotation;
    } finally {
      await gate.open();
    }
    expect(rotated).toHaveLength(1);
    expect((await keys.published()).map((k) => k.kid)).toEqual([rotated[0].kid]);
  });
});

describe('a deletion before the alarm', () => {
  it("copies up the events a project recorded just before it was deleted: its group's log and the instance log have them", async () => {
    const [owner, bob] = await Promise.all([person('own'), person('bob')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await settle(project.id, group.id);
    // A request, then the project deleted before its alarm copied the request's event up.
    expect((await as(bob).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).delete(`/projects/${project.id}`)).status).toBe(202);
    await settle(project.id, group.id);
    const inGroup = (await (await as(owner).get(`/groups/${group.id}/audit_events?per_page=100`)).json()) as { event_name: string; entity_id: number }[];
    expect(inGroup.filter((e) => e.entity_id === project.id).map((e) => e.event_name)).toContain('access_request_created');
    const instance = (await (await admin.get(`/audit_events?entity_type=Project&entity_id=${project.id}&per_page=100`)).json()) as { event_name: string }[];
    expect(instance.map((e) => e.event_name)).toContain('access_request_created');
  });
});
