// Rules that read state, wait for another object, and then write: what they read before the wait
// must not decide the write when another call changed it meanwhile. Each race is ordered by a gate
// in the object (support/object-gate.ts), so the interleaving happens every time.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { unique } from './support/http';
import { objectGate } from './support/object-gate';
import { as, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';

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
