import { env, exports } from 'cloudflare:workers';
import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { app } from '../../worker/app';
import { config } from '../../worker/config';
import { ADMIN, Browser, call, createUser, ORIGIN, unique } from './support/http';
import { directoryStub } from './support/storage';

const pageHeaders = (res: Response) => {
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
};

describe('sign-in page', () => {
  it('signs a user in with a session cookie and returns to the requested path', async () => {
    const ann = await createUser('ann');
    const browser = new Browser();
    const page = await browser.get('/users/sign_in?return_to=%2Foauth%2Fauthorized_applications');
    expect(page.status).toBe(200);
    pageHeaders(page);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/users/sign_in"');
    expect(html).toContain('<label for="username">');

    const res = await browser.post('/users/sign_in', {
      username: ann.username,
      password: ann.password,
      authenticity_token: Browser.csrf(html),
      return_to: '/oauth/authorized_applications',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/oauth/authorized_applications');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('knock_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // plain http in tests; Secure is set on https

    const home = await browser.get('/');
    expect(home.status).toBe(200);
    expect(await home.text()).toContain(`@${ann.username}`);
  });

  it('signs in with a password hashed at an earlier PBKDF2 count, after PASSWORD_HASH_ITERATIONS changed', async () => {
    const username = unique('counted');
    const password = `pw-${username}-secret`;
    // Made by a deployment that hashed at 2,000 iterations; this one hashes at another count.
    const earlier = { ...env, PASSWORD_HASH_ITERATIONS: '2000' };
    expect(config(env).passwordHashIterations).not.toBe(2000);
    const body = JSON.stringify({ username, name: username, password, email: `${username}@example.test` });
    const made = await app.fetch(new Request(`${ORIGIN}/api/v4/users`, { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body }), earlier, createExecutionContext());
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: number };
    const stored = await runInDurableObject(directoryStub(), (_i, state) => state.storage.sql.exec<{ h: string }>('SELECT password_hash AS h FROM users WHERE id = ?', id).one().h);
    expect(stored.split('$')[1]).toBe('2000');

    expect((await new Browser().signIn({ username, password }, '/')).status).toBe(303);
    expect((await new Browser().signIn({ username, password: 'not-the-password' })).status).toBe(401);
  });

  it('says the same thing for a wrong password and an unknown user', async () => {
    const ann = await createUser('ann');
    const wrong = await new Browser().signIn({ username: ann.username, password: 'not-the-password' });
    const unknown = await new Browser().signIn({ username: unique('ghost'), password: 'whatever-password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (html: string) => /role="alert">([^<]+)</.exec(html)?.[1];
    expect(message(await wrong.text())).toBe('Invalid username or password.');
    expect(message(await unknown.text())).toBe('Invalid username or password.');
  });

  it('throttles after 10 failures for a username (429 with Retry-After), even with the right password', async () => {
    const ann = await createUser('ann');
    for (let i = 0; i < 10; i++) {
      const res = await new Browser().signIn({ username: ann.username, password: `wrong-${i}` });
      expect(res.status).toBe(401);
    }
    const blocked = await new Browser().signIn(ann);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
  });

  it('throttles per client address across usernames', async () => {
    const ip = { 'CF-Connecting-IP': '203.0.113.77' };
    const browser = new Browser();
    for (let i = 0; i < 10; i++) {
      const page = await browser.get('/users/sign_in');
      const res = await browser.post('/users/sign_in', { username: unique('nobody'), password: 'x-password', authenticity_token: Browser.csrf(await page.text()) }, ip);
      expect(res.status).toBe(401);
    }
    const ann = await createUser('ann');
    const page = await browser.get('/users/sign_in');
    const res = await browser.post('/users/sign_in', { username: ann.username, password: ann.password, authenticity_token: Browser.csrf(await page.text()) }, ip);
    expect(res.status).toBe(429);
  });

  it("takes the client's address only from the header CLIENT_ADDRESS_HEADER names: a client's own CF-Connecting-IP counts for nothing", async () => {
    /** A browser on a deployment configured with `header` (empty: nothing in front sets one). */
    const browserBehind = (header: string) => {
      const browser = new Browser();
      const configured = { ...env, CLIENT_ADDRESS_HEADER: header };
      browser.fetcher = async (path, init) => app.fetch(new Request(`${ORIGIN}${path}`, init), configured, createExecutionContext());
      return browser;
    };
    const failTen = async (browser: Browser, headers: (i: number) => Record<string, string>) => {
      for (let i = 0; i < 10; i++) {
        const page = await browser.get('/users/sign_in');
        const res = await browser.post('/users/sign_in', { username: unique('nobody'), password: 'x-password', authenticity_token: Browser.csrf(await page.text()) }, headers(i));
        expect(res.status).toBe(401);
      }
    };
    const signInFrom = async (browser: Browser, headers: Record<string, string>) => {
      const ann = await createUser('ann');
      const page = await browser.get('/users/sign_in');
      return browser.post('/users/sign_in', { username: ann.username, password: ann.password, authenticity_token: Browser.csrf(await page.text()) }, headers);
    };

    // Behind a proxy that sets X-Real-IP: a new CF-Connecting-IP on every guess does not reset the count.
    const proxied = browserBehind('X-Real-IP');
    const real = `198.18.${Math.floor(Math.random() * 250)}.1`;
    await failTen(proxied, (i) => ({ 'X-Real-IP': real, 'CF-Connecting-IP': `203.0.113.${i}` }));
    expect((await signInFrom(proxied, { 'X-Real-IP': real, 'CF-Connecting-IP': '203.0.113.200' })).status).toBe(429);

    // Nothing in front: an address a client writes is nobody's, so it throttles nobody else either.
    const direct = browserBehind('');
    const claimed = { 'CF-Connecting-IP': `198.18.${Math.floor(Math.random() * 250)}.2`, 'X-Real-IP': '198.18.255.2' };
    await failTen(direct, () => claimed);
    expect((await signInFrom(direct, claimed)).status).toBe(303);
  });

  it('rejects a form without the CSRF token, with a foreign token, or from another origin', async () => {
    const ann = await createUser('ann');
    const browser = new Browser();
    await browser.get('/users/sign_in');
    const noToken = await browser.post('/users/sign_in', { username: ann.username, password: ann.password });
    expect(noToken.status).toBe(403);
    const other = new Browser();
    const otherToken = Browser.csrf(await (await other.get('/users/sign_in')).text());
    const foreign = await browser.post('/users/sign_in', { username: ann.username, password: ann.password, authenticity_token: otherToken });
    expect(foreign.status).toBe(403);
    const page = await browser.get('/users/sign_in');
    const crossSite = await browser.post(
      '/users/sign_in',
      { username: ann.username, password: ann.password, authenticity_token: Browser.csrf(await page.text()) },
      { Origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect(browser.cookies.has('knock_session')).toBe(false);
  });

  it.each([
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['javascript:alert(1)', '/'],
    ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
    ['/\t/evil.example', '/'],
    ['/oauth/authorized_applications?x=1', '/oauth/authorized_applications?x=1'],
  ])('never redirects off-site: return_to=%s → %s', async (returnTo, expected) => {
    const ann = await createUser('ann');
    const res = await new Browser().signIn(ann, returnTo);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(expected);
    expect(new URL(res.headers.get('location')!, ORIGIN).origin).toBe(ORIGIN);
  });

  it('signs out only with a valid CSRF token', async () => {
    const ann = await createUser('ann');
    const browser = new Browser();
    await browser.signIn(ann);
    expect((await browser.post('/users/sign_out', {})).status).toBe(403);
    const home = await browser.get('/');
    const out = await browser.post('/users/sign_out', { authenticity_token: Browser.csrf(await home.text()) });
    expect(out.status).toBe(303);
    expect((await browser.get('/')).headers.get('location')).toBe('/users/sign_in');
  });
});

describe('sign-up page', () => {
  it('creates an account and signs it in', async () => {
    const browser = new Browser();
    const page = await browser.get('/users/sign_up');
    pageHeaders(page);
    const username = unique('newbie');
    const res = await browser.post('/users/sign_up', {
      name: 'New Bie', username, email: `${username}@x.test`, password: 'a-good-password', authenticity_token: Browser.csrf(await page.text()),
    });
    expect(res.status).toBe(303);
    expect(await (await browser.get('/')).text()).toContain(`@${username}`);
    const dup = new Browser();
    const page2 = await dup.get('/users/sign_up');
    const again = await dup.post('/users/sign_up', { name: 'Other', username, password: 'a-good-password', authenticity_token: Browser.csrf(await page2.text()) });
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('<p class="field-error" id="username-error" role="alert">Username has already been taken.</p>');
    expect(html).toMatch(/<input type="text" id="username" [^>]*aria-invalid="true" aria-describedby="username-error"/);
  });

  it("never tells whether an email address is someone's: it takes none, so a known one gets the same answer as a new one", async () => {
    const known = await createUser('known');
    const form = async (email: string) => {
      const browser = new Browser();
      const page = await browser.get('/users/sign_up');
      expect(await page.clone().text()).not.toContain('name="email"');
      const username = unique('probe');
      const res = await browser.post('/users/sign_up', { name: 'Probe', username, email, password: 'a-good-password', authenticity_token: Browser.csrf(await page.text()) });
      return { status: res.status, location: res.headers.get('location'), username };
    };
    const taken = await form(`${known.username}@example.test`);
    const fresh = await form(`${unique('nobody')}@example.test`);
    expect([taken.status, taken.location]).toEqual([fresh.status, fresh.location]);
    expect(taken.status).toBe(303);
    const emailOf = async (username: string) => {
      const [{ id }] = (await (await call(`/api/v4/users?username=${username}`, { headers: ADMIN })).json()) as { id: number }[];
      return ((await (await call(`/api/v4/users/${id}`, { headers: ADMIN })).json()) as { email: string | null }).email;
    };
    expect(await emailOf(taken.username)).toBeNull();
    expect(await emailOf(known.username)).toBe(`${known.username}@example.test`);
  });

  it('explains invalid input beside its field, with the reason', async () => {
    const browser = new Browser();
    const page = await browser.get('/users/sign_up');
    const res = await browser.post('/users/sign_up', { name: 'X', username: unique('x'), password: 'short', authenticity_token: Browser.csrf(await page.text()) });
    expect(res.status).toBe(400);
    const html = await res.text();
    // Beside the password field, with the reason; what was typed (but the password) is kept.
    expect(html).toContain('<p class="field-error" id="password-error" role="alert">Password is too short (minimum is 8 characters).</p>');
    expect(html).toMatch(/<input type="password" id="password" [^>]*aria-invalid="true" aria-describedby="password-error"/);
    expect(html).toContain('value="X"');
  });

  it('is off when SIGNUP_ENABLED=false', async () => {
    const off = { ...env, SIGNUP_ENABLED: 'false' };
    const get = await app.fetch(new Request(`${ORIGIN}/users/sign_up`), off, createExecutionContext());
    expect(get.status).toBe(404);
    const signIn = await app.fetch(new Request(`${ORIGIN}/users/sign_in`), off, createExecutionContext());
    expect(await signIn.text()).not.toContain('/users/sign_up');
    const post = await app.fetch(
      new Request(`${ORIGIN}/users/sign_up`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: ORIGIN },
        body: new URLSearchParams({ name: 'X', username: unique('x'), password: 'a-good-password' }).toString(),
      }),
      off,
      createExecutionContext(),
    );
    expect(post.status).toBe(404);
  });
});

describe('stylesheet', () => {
  it('is served for the pages', async () => {
    const res = await exports.default.fetch(`${ORIGIN}/assets/knock.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/css');
  });
});

void call;
