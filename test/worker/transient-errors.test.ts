// A Durable Object the runtime says could not answer now (its error's `retryable` or `overloaded`)
// is a 503 with Retry-After, in the API's, the token endpoint's and the console's shapes; any other
// error thrown by an object stays a 500. The objects' classes are made to fail for one call by
// replacing a method on their prototype (the test shares the objects' isolate).
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import type { User } from '../../worker/durable/user/user';
import { as, createProject, person, startWorker } from './support/namespaces';
import { authorizeCode, exchange, refresh, registerApp, signedIn } from './support/oauth';

/** An error as the runtime marks one (workerd sets these on a failed Durable Object call). */
const marked = (mark: 'retryable' | 'overloaded') => Object.assign(new Error(`${mark} for this test`), { [mark]: true });

/** Runs `during` while `method` of the class of the object behind `stub` throws `error`. */
const failing = async (stub: DurableObjectStub<Namespace> | DurableObjectStub<User>, method: string, error: Error, during: () => Promise<void>) => {
  const proto = (await runInDurableObject(stub, (instance: object) => Object.getPrototypeOf(instance))) as Record<string, unknown>;
  const original = proto[method];
  proto[method] = () => Promise.reject(error);
  try {
    await during();
  } finally {
    proto[method] = original;
  }
};

describe('an object that could not answer now', () => {
  beforeAll(startWorker, 30_000);

  it('is a 503 with Retry-After on the API, and an error of the object itself a 500', async () => {
    const owner = await person('own');
    const project = await createProject(owner);
    const stub = env.NAMESPACES.getByName(String(project.id));
    const list = () => as(owner).get(`/projects/${project.id}/access_requests`);
    await failing(stub, 'listAccessRequests', marked('overloaded'), async () => {
      const res = await list();
      expect(res.status).toBe(503);
      expect(res.headers.get('Retry-After')).toBe('10');
      expect(await res.json()).toEqual({ message: '503 Service Unavailable: the request could not be completed now; try again' });
    });
    await failing(stub, 'listAccessRequests', new Error('a bug'), async () => {
      const res = await list();
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: '500 Internal Server Error' });
    });
    expect((await list()).status).toBe(200);
  });

  it("is a 503 at the token endpoint, and the refresh token still works afterwards", async () => {
    const app = await registerApp();
    const { browser, user } = await signedIn('transient');
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    const stub = env.USERS.getByName(String(user.id));
    await failing(stub, 'refresh', marked('retryable'), async () => {
      const res = await refresh(app, tokens.refresh_token);
      expect(res.status).toBe(503);
      expect(res.headers.get('Retry-After')).toBe('10');
    });
    expect((await refresh(app, tokens.refresh_token)).status).toBe(200);
  });

  it('is a 503 page in the console', async () => {
    const project = await createProject(await person('own'));
    const { browser, user } = await signedIn('transient');
    await failing(env.NAMESPACES.getByName(String(project.id)), 'standingOf', marked('retryable'), async () => {
      const res = await browser.get(`/projects/${project.full_path}`);
      expect(res.status).toBe(503);
      expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('try again');
    });
    // A page outside the console, failing in the middleware that reads the session: a page too.
    await failing(env.USERS.getByName(String(user.id)), 'getSession', marked('retryable'), async () => {
      const res = await browser.get('/oauth/authorized_applications');
      expect(res.status).toBe(503);
      expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('href="/users/sign_in"');
    });
  });
});
