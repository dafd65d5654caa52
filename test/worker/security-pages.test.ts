// Every HTML page and every form, found by visiting them as a user would: anti-framing and CSP
// headers, CSRF protection, cookie flags, and CORS only where browser clients need it.
import { env, exports } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { app as worker } from '../../worker/app';
import { CORS_PATHS } from './support/contract';
import { ADMIN, Browser, call, createUser, jsonBody, ORIGIN, unique, type TestUser } from './support/http';
import { authorizeCode, authorizePath, registerApp, type App } from './support/oauth';

interface Page {
  name: string;
  status: number;
  res: Response;
  html: string;
}

describe('every HTML page', () => {
  const pages: Page[] = [];
  let ann: TestUser;
  let oauthApp: App;

  const visit = async (name: string, status: number, res: Response) => {
    const html = await res.text();
    expect(res.status, `${name}: ${html.slice(0, 200)}`).toBe(status);
    pages.push({ name, status, res, html });
  };

  beforeAll(async () => {
    ann = await createUser('pages');
    oauthApp = await registerApp();
    const anonymous = new Browser();
    await visit('sign-in', 200, await anonymous.get('/users/sign_in'));
    await visit('sign-up', 200, await anonymous.get('/users/sign_up'));
    await visit('sign-in without CSRF token', 403, await anonymous.post('/users/sign_in', { username: ann.username, password: ann.password }));
    await visit('sign-in failure', 401, await anonymous.signIn({ username: ann.username, password: 'wrong-password' }));
    const page = await anonymous.get('/users/sign_up');
    await visit('sign-up refused', 400, await anonymous.post('/users/sign_up', { name: 'x', username: unique('x'), password: 'short', authenticity_token: Browser.csrf(await page.text()) }));
    const page2 = await anonymous.get('/users/sign_up');
    await visit('sign-up conflict', 409, await anonymous.post('/users/sign_up', { name: 'x', username: ann.username, password: 'long-enough-pw', authenticity_token: Browser.csrf(await page2.text()) }));
    await visit('authorize: unknown client', 400, await anonymous.get(authorizePath({ client_id: 'nope', redirect_uri: 'https://x.example/' })));

    const victim = await createUser('locked');
    const thrower = new Browser();
    for (let i = 0; i < 10; i++) await thrower.signIn({ username: victim.username, password: `wrong-${i}` });
    await visit('sign-in throttled', 429, await new Browser().signIn(victim));

    const off = await worker.fetch(new Request(`${ORIGIN}/users/sign_up`), { ...env, SIGNUP_ENABLED: 'false' }, createExecutionContext());
    await visit('sign-up disabled', 404, off);

    const signedIn = new Browser();
    await signedIn.signIn(ann);
    await visit('home', 200, await signedIn.get('/'));
    await visit('consent', 200, await signedIn.get(authorizePath({ client_id: oauthApp.clientId, redirect_uri: oauthApp.redirectUri, state: 's' })));
    await visit('consent without CSRF token', 403, await signedIn.post('/login/oauth/authorize', { client_id: oauthApp.clientId, decision: 'authorize' }));
    await authorizeCode(signedIn, oauthApp);
    await visit('authorized applications', 200, await signedIn.get('/oauth/authorized_applications'));
    await visit('two-factor settings', 200, await signedIn.get('/-/profile/two_factor_auth'));
    await visit('revoke without CSRF token', 403, await signedIn.post('/oauth/authorized_applications/revoke', { client_id: oauthApp.clientId }));
  }, 60_000);

  it('covers every kind of page (pages, errors, consent)', () => {
    expect(pages.map((p) => p.name)).toHaveLength(15);
  });

  it('forbids framing (X-Frame-Options DENY, frame-ancestors none) and sends a strict CSP', () => {
    for (const { name, res } of pages) {
      expect(res.headers.get('x-frame-options'), name).toBe('DENY');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, name).toContain("frame-ancestors 'none'");
      expect(csp, name).toContain("default-src 'none'");
      expect(csp, name).toContain("style-src 'self'");
      expect(csp, name).not.toContain('unsafe-inline');
      expect(csp, name).not.toContain('unsafe-eval');
      expect(res.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), name).toBeTruthy();
      expect(res.headers.get('content-type'), name).toMatch(/^text\/html; charset=utf-8$/i);
    }
  });

  it('has no script but /assets/webauthn.js (passkeys), and no inline style or event handler that the CSP would have to allow', () => {
    for (const { name, html } of pages) {
      expect(html.replace(/<script src="\/assets\/webauthn\.js" defer(="")?><\/script>/g, ''), name).not.toMatch(/<script/i);
      expect(html, name).not.toMatch(/\sstyle=/i);
      expect(html, name).not.toMatch(/\son[a-z]+=/i);
    }
  });

  it('puts a CSRF token in every POST form, and none in a GET form (a search), where it would land in the address', () => {
    let forms = 0;
    for (const { name, html } of pages) {
      for (const form of html.matchAll(/<form\b[^>]*>([\s\S]*?)<\/form>/g)) {
        const where = `${name}: ${form[0].slice(0, 100)}`;
        expect(form[0], where).toMatch(/method="(post|get)"/);
        if (form[0].includes('method="get"')) {
          expect(form[1], where).not.toMatch(/authenticity_token/);
          continue;
        }
        forms++;
        expect(form[1], where).toMatch(/name="authenticity_token" value="[A-Za-z0-9_-]{20,}"/);
      }
    }
    expect(forms).toBeGreaterThanOrEqual(8);
  });
});

describe('every form refuses forged submissions', () => {
  let ann: TestUser;
  let oauthApp: App;
  beforeAll(async () => {
    ann = await createUser('csrf');
    oauthApp = await registerApp();
  });

  /** A signed-in browser that has authorized the app, and its CSRF token. */
  const victim = async () => {
    const browser = new Browser();
    await browser.signIn(ann);
    await authorizeCode(browser, oauthApp);
    const home = await browser.get('/');
    const csrf = /name="authenticity_token" value="([^"]+)"/.exec(await home.text())![1];
    return { browser, csrf };
  };

  const forgeries = (csrf: string, otherCsrf: string): [string, Record<string, string>, Record<string, string>][] => [
    ['no token', {}, {}],
    ['a token of another session', { authenticity_token: otherCsrf }, {}],
    ['a garbage token', { authenticity_token: 'A'.repeat(32) }, {}],
    ['the right token from another origin', { authenticity_token: csrf }, { Origin: 'https://evil.example' }],
    ['the right token from a null origin', { authenticity_token: csrf }, { Origin: 'null' }],
  ];

  it.each([
    ['sign-out', '/users/sign_out', {}],
    ['consent', '/login/oauth/authorize', { decision: 'authorize', response_type: 'code', state: 's' }],
    ['revoke an application', '/oauth/authorized_applications/revoke', {}],
  ])('%s', async (_name, action, fields) => {
    const { browser, csrf } = await victim();
    const other = await victim();
    const form = { ...fields, client_id: oauthApp.clientId, redirect_uri: oauthApp.redirectUri };
    for (const [how, token, headers] of forgeries(csrf, other.csrf)) {
      const res = await browser.post(action, { ...form, ...token }, headers);
      expect(res.status, how).toBe(403);
      expect(res.headers.get('location'), how).toBeNull();
      // A page with a way back, not a JSON body.
      expect(res.headers.get('Content-Type'), how).toMatch(/^text\/html/);
      expect(await res.text(), how).toContain('href="/"');
    }
    // Nothing happened: still signed in, the application still authorized.
    expect((await browser.get('/')).status).toBe(200);
    expect(await (await browser.get('/oauth/authorized_applications')).text()).toContain(`value="${oauthApp.clientId}"`);
  });

  it.each([
    ['sign-in', '/users/sign_in'],
    ['sign-up', '/users/sign_up'],
  ])('%s', async (_name, action) => {
    const browser = new Browser();
    const page = await browser.get(action);
    const csrf = Browser.csrf(await page.text());
    const other = Browser.csrf(await (await new Browser().get(action)).text());
    const username = unique('forged');
    for (const [how, token, headers] of forgeries(csrf, other)) {
      const fields: Record<string, string> = action === '/users/sign_in' ? { username: ann.username, password: ann.password } : { name: 'Forged', username, password: 'long-enough-pw' };
      const res = await browser.post(action, { ...fields, ...token }, headers);
      expect(res.status, how).toBe(403);
      expect(browser.cookies.has('knock_session'), how).toBe(false);
    }
    expect(await (await call(`/api/v4/users?username=${username}`, { headers: ADMIN })).json()).toEqual([]);
  });
});

describe('unreadable form bodies', () => {
  it.each(['/users/sign_in', '/users/sign_up', '/users/sign_out', '/login/oauth/authorize', '/oauth/authorized_applications/revoke'])(
    '%s answers a multipart body without its boundary, or junk, with the form-expired page, not a 500',
    async (action) => {
      const ann = await createUser('junk');
      const browser = new Browser();
      await browser.signIn(ann);
      for (const [type, body] of [['multipart/form-data', ''], ['multipart/form-data; boundary=x', 'garbage'], ['application/x-www-form-urlencoded', '%%%&&=\u0000']]) {
        const res = await browser.post(action, {}, { 'Content-Type': type });
        const raw = await call(action, { method: 'POST', headers: { 'Content-Type': type, Origin: ORIGIN }, body, redirect: 'manual' });
        for (const r of [res, raw]) {
          expect(r.status, `${action} ${type}`).toBeLessThan(500);
          expect([302, 303, 403, 404]).toContain(r.status);
        }
      }
    },
  );
});

describe('cookies', () => {
  it('are HttpOnly, SameSite=Lax, path /, and Secure over https', async () => {
    const ann = await createUser('cookie');
    for (const origin of ['http://knock.test', 'https://knock.test']) {
      const get = await fetchAt(origin, '/users/sign_in');
      const csrfCookie = get.headers.getSetCookie().find((c) => c.startsWith('knock_csrf='))!;
      const token = /name="authenticity_token" value="([^"]+)"/.exec(await get.text())![1];
      const signIn = await fetchAt(origin, '/users/sign_in', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin, Cookie: csrfCookie.split(';')[0] },
        body: new URLSearchParams({ username: ann.username, password: ann.password, authenticity_token: token }).toString(),
      });
      expect(signIn.status).toBe(303);
      const session = signIn.headers.getSetCookie().find((c) => c.startsWith('knock_session='))!;
      for (const cookie of [csrfCookie, session]) {
        expect(cookie).toMatch(/;\s*HttpOnly/i);
        expect(cookie).toMatch(/;\s*SameSite=Lax/i);
        expect(cookie).toMatch(/;\s*Path=\//i);
        if (origin.startsWith('https')) expect(cookie).toMatch(/;\s*Secure/i);
        else expect(cookie).not.toMatch(/;\s*Secure/i);
        expect(cookie).not.toMatch(/;\s*Domain=/i);
      }
      expect(session).toMatch(/Max-Age=604800/);
      expect(session.split(';')[0].length).toBeGreaterThan('knock_session='.length + 30);
    }
  });

  it('a session id is replaced at sign-in (no fixation) and dead after sign-out', async () => {
    const ann = await createUser('fix');
    const browser = new Browser();
    browser.cookies.set('knock_session', 'attacker-chosen-session-id-0123456789');
    await browser.signIn(ann);
    const first = browser.cookies.get('knock_session')!;
    expect(first).not.toBe('attacker-chosen-session-id-0123456789');
    const home = await browser.get('/');
    await browser.post('/users/sign_out', { authenticity_token: Browser.csrf(await home.text()) });
    const replay = await call('/', { headers: { Cookie: `knock_session=${first}` }, redirect: 'manual' });
    expect(replay.status).toBe(302);
    expect(replay.headers.get('location')).toBe('/users/sign_in');
  });
});

/** Calls the Worker at another origin (https, to see the Secure flag). */
const fetchAt = (origin: string, path: string, init: RequestInit = {}) => exports.default.fetch(`${origin}${path}`, { redirect: 'manual', ...init });

describe('CORS', () => {
  const paths = [
    '/', '/users/sign_in', '/users/sign_up', '/users/sign_out', '/oauth/authorized_applications', '/oauth/authorized_applications/revoke',
    '/login/oauth/authorize', '/login/oauth/access_token', '/login/oauth/revoke', '/login/oauth/introspect', '/.well-known/oauth-authorization-server',
    '/oauth/authorize', '/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/userinfo', '/oauth/discovery/keys', '/.well-known/openid-configuration',
    '/api/v4/user', '/api/v4/users', '/api/v4/groups', '/api/v4/projects', '/api/v4/groups/1/access_requests', '/api/v4/projects/1/access_requests/1/approve',
    '/api/v4/applications', '/api/v4/version', '/api/v4/openapi.json',
  ];

  it('is allowed only on the token, revocation, userinfo, keys and metadata endpoints, never with credentials', async () => {
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT']) {
        const preflight = await call(path, {
          method: 'OPTIONS',
          headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type, authorization, private-token' },
        });
        const actual = await call(path, { method: method === 'GET' ? 'GET' : 'POST', headers: { Origin: 'https://evil.example', ...ADMIN }, redirect: 'manual' });
        for (const res of [preflight, actual]) {
          const allowed = res.headers.get('access-control-allow-origin');
          if (!CORS_PATHS.has(path)) expect(allowed, `${method} ${path}`).toBeNull();
          else if (res === preflight) expect(allowed, `${method} ${path}`).toBe('*');
          expect(res.headers.get('access-control-allow-credentials'), `${method} ${path}`).toBeNull();
          expect(res.status, `${method} ${path}`).toBeLessThan(500);
        }
      }
    }
  });

  it('lets a browser-based client call the token endpoint from any origin', async () => {
    const res = await call('/login/oauth/access_token', jsonBody({ grant_type: 'refresh_token', refresh_token: 'x' }, { Origin: 'https://app.example' }));
    expect(res.status).toBe(401); // no client: invalid_client, readable by the calling page
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
