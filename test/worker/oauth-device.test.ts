// The device authorization grant (RFC 8628) at GitLab's paths: a device starts it, the user enters
// the code on /oauth/device and decides, the device polls the token endpoint. The clock is moved,
// never slept.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../worker/durable/user/user';
import { advance } from './support/clock';
import { startWorker } from './support/namespaces';
import { ADMIN, Browser, call, csrfOf, registerApp, signedIn, whoAmI, type App } from './support/oauth';
import { openidApp, verifyIdToken } from './support/oidc';

beforeAll(startWorker, 30_000);

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

const form = (fields: Record<string, string | undefined>): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined)).toString(),
});

const clientFields = (app: App) => ({ client_id: app.clientId, client_secret: app.secret ?? undefined });

const startDevice = async (app: App, scope?: string): Promise<DeviceAuthorization> => {
  const res = await call('/oauth/authorize_device', form({ ...clientFields(app), scope }));
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('Cache-Control')).toBe('no-store');
  return (await res.json()) as DeviceAuthorization;
};

const poll = (app: App, deviceCode: string) => call('/oauth/token', form({ ...clientFields(app), grant_type: GRANT, device_code: deviceCode }));

const expectPollError = async (res: Response, error: string) => {
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: string }).error).toBe(error);
};

/** The code entered on the verification page: the confirmation page's HTML. */
const enterCode = async (browser: Browser, userCode: string) => {
  const page = await browser.get(`/oauth/device?user_code=${encodeURIComponent(userCode)}`);
  expect(page.status).toBe(200);
  return browser.post('/oauth/device', { authenticity_token: csrfOf(await page.text()), user_code: userCode });
};

/** Enters the code and answers the confirmation page. */
const decide = async (browser: Browser, userCode: string, decision: 'authorize' | 'deny') => {
  const confirm = await enterCode(browser, userCode);
  expect(confirm.status).toBe(200);
  const html = await confirm.text();
  const shown = /name="user_code" value="([^"]+)"/.exec(html)?.[1] ?? '';
  return browser.post('/oauth/device', { authenticity_token: csrfOf(html), user_code: shown, decision });
};

describe('the device authorization endpoint', () => {
  it('answers a device code, a user code as XXXX-XXXX, the verification page and its link with the code, five minutes and five seconds', async () => {
    const app = await registerApp();
    const started = await startDevice(app);
    expect(started.device_code).toMatch(/^knock_dc_\d+_[A-Za-z0-9_-]{43}$/);
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.verification_uri).toBe('http://knock.test/oauth/device');
    expect(started.verification_uri_complete).toBe(`http://knock.test/oauth/device?user_code=${started.user_code}`);
    expect(started.expires_in).toBe(300);
    expect(started.interval).toBe(5);
  });

  it('refuses an unknown client, a confidential client without its secret, and a scope the application may not have', async () => {
    const app = await registerApp({ scopes: 'read_api' });
    expect((await call('/oauth/authorize_device', form({ client_id: 'nobody' }))).status).toBe(401);
    const unauthenticated = await call('/oauth/authorize_device', form({ client_id: app.clientId }));
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({ error: 'invalid_client' });
    const wide = await call('/oauth/authorize_device', form({ ...clientFields(app), scope: 'api' }));
    expect(wide.status).toBe(400);
    expect(await wide.json()).toMatchObject({ error: 'invalid_scope' });
  });
});

describe('the device flow', () => {
  it('gives the device tokens and an id_token once the user authorizes on /oauth/device, exactly once', async () => {
    const app = await openidApp();
    const { user, browser } = await signedIn('device');
    const started = await startDevice(app, 'openid profile api');
    await expectPollError(await poll(app, started.device_code), 'authorization_pending');

    // The confirmation page names the application and what each scope reveals.
    const confirm = await enterCode(browser, started.user_code);
    const html = await confirm.text();
    expect(html).toContain(app.name);
    expect(html).toContain('Sign you in');
    expect(html).toContain(`shows the code <strong>${started.user_code}</strong>`);
    const authorized = await browser.post('/oauth/device', { authenticity_token: csrfOf(html), user_code: started.user_code, decision: 'authorize' });
    expect(authorized.status).toBe(200);
    expect(await authorized.text()).toContain('Device connected');

    advance(5);
    const res = await poll(app, started.device_code);
    expect(res.status, await res.clone().text()).toBe(200);
    const tokens = (await res.json()) as { access_token: string; refresh_token: string; scope: string; id_token: string };
    expect(tokens.scope).toBe('api openid profile');
    expect(((await (await whoAmI(tokens.access_token)).json()) as { username: string }).username).toBe(user.username);
    const { payload } = await verifyIdToken(tokens.id_token, app);
    expect(payload.sub).toBe(String(user.id));
    expect(payload.nonce).toBeUndefined();

    advance(10);
    await expectPollError(await poll(app, started.device_code), 'invalid_grant');
  });

  it('works for a public client, which names itself and sends no PKCE', async () => {
    const app = await registerApp({ confidential: false });
    const { browser } = await signedIn('device');
    const started = await startDevice(app);
    expect((await decide(browser, started.user_code, 'authorize')).status).toBe(200);
    const res = await poll(app, started.device_code);
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it('gives no tokens when the user was blocked between authorizing and the poll', async () => {
    const app = await registerApp();
    const { user, browser } = await signedIn('device');
    const started = await startDevice(app);
    expect((await decide(browser, started.user_code, 'authorize')).status).toBe(200);
    expect((await call(`/api/v4/users/${user.id}/block`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    await expectPollError(await poll(app, started.device_code), 'invalid_grant');
  });

  it("keeps the approval for the next poll when the user's object could not be reached to redeem it", async () => {
    const app = await registerApp();
    const { user, browser } = await signedIn('device');
    const started = await startDevice(app);
    expect((await decide(browser, started.user_code, 'authorize')).status).toBe(200);
    // The user's object fails the one call (as an overloaded or restarting object does).
    const stub = env.USERS.getByName(String(user.id));
    const proto = await runInDurableObject(stub, (instance: User) => Object.getPrototypeOf(instance) as User);
    const redeemCode = proto.redeemCode;
    proto.redeemCode = () => Promise.reject(new Error('the object could not be reached'));
    try {
      expect((await poll(app, started.device_code)).status).toBe(500);
    } finally {
      proto.redeemCode = redeemCode;
    }
    advance(5);
    const res = await poll(app, started.device_code);
    expect(res.status, await res.clone().text()).toBe(200);
    const tokens = (await res.json()) as { access_token: string };
    expect(((await (await whoAmI(tokens.access_token)).json()) as { username: string }).username).toBe(user.username);
    advance(5);
    await expectPollError(await poll(app, started.device_code), 'invalid_grant');
  });

  it('says slow_down to a device polling faster than the interval, and adds five seconds to it', async () => {
    const app = await registerApp();
    const started = await startDevice(app);
    await expectPollError(await poll(app, started.device_code), 'authorization_pending');
    await expectPollError(await poll(app, started.device_code), 'slow_down');
    advance(5);
    await expectPollError(await poll(app, started.device_code), 'slow_down');
    advance(15);
    await expectPollError(await poll(app, started.device_code), 'authorization_pending');
  });

  it('says access_denied after the user denies, and the code cannot be approved afterwards', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('device');
    const started = await startDevice(app);
    const denied = await decide(browser, started.user_code, 'deny');
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('Device not connected');
    await expectPollError(await poll(app, started.device_code), 'access_denied');
    expect((await enterCode(browser, started.user_code)).status).toBe(404);
  });

  it('says expired_token after five minutes, and the page no longer takes the code', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('device');
    const started = await startDevice(app);
    advance(301);
    await expectPollError(await poll(app, started.device_code), 'expired_token');
    const page = await enterCode(browser, started.user_code);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('not valid, has expired or was already used');
  });

  it('refuses a device code of another client, an unknown one and one that is not a device code', async () => {
    const [app, other] = await Promise.all([registerApp(), registerApp()]);
    const started = await startDevice(app);
    await expectPollError(await poll(other, started.device_code), 'invalid_grant');
    await expectPollError(await poll(app, started.device_code.slice(0, -4) + 'AAAA'), 'invalid_grant');
    await expectPollError(await poll(app, 'knock_dc_99999_AAAAAAAAAAAAAAAAAAAAAAAA'), 'invalid_grant');
    await expectPollError(await poll(app, 'not-a-device-code'), 'invalid_grant');
    const missing = await call('/oauth/token', form({ ...clientFields(app), grant_type: GRANT }));
    await expectPollError(missing, 'invalid_request');
  });

  // Ten trials: in workerd under test the Worker and its objects share one thread, so the same
  // two polls meet the same way each time (in 50 trials, the first poll won every one).
  it('hands an approval to one of two polls racing for it, in every one of 10 trials', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('device');
    for (let trial = 0; trial < 10; trial++) {
      const started = await startDevice(app);
      expect((await decide(browser, started.user_code, 'authorize')).status).toBe(200);
      const answers = await Promise.all([poll(app, started.device_code), poll(app, started.device_code)]);
      expect(answers.map((r) => r.status).sort(), `trial ${trial}`).toEqual([200, 400]);
      const refused = answers.find((r) => r.status === 400) as Response;
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
      // The loser did not end the winner's grant, as a replayed authorization code would.
      const winner = (await (answers.find((r) => r.status === 200) as Response).json()) as { access_token: string };
      expect((await whoAmI(winner.access_token)).status, `trial ${trial}`).toBe(200);
    }
  }, 120_000);
});

describe('the verification page', () => {
  it('takes the code in any case, with or without the dash', async () => {
    const app = await registerApp();
    const { browser } = await signedIn('device');
    const started = await startDevice(app);
    const typed = started.user_code.replace('-', '').toLowerCase();
    const confirm = await enterCode(browser, typed);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain(app.name);
  });

  it('says a wrong code is not valid, and a code of the wrong shape what a code looks like', async () => {
    const { browser } = await signedIn('device');
    const wrong = await enterCode(browser, 'BCDF-GHJK');
    expect(wrong.status).toBe(404);
    expect(await wrong.text()).toContain('not valid');
    const malformed = await enterCode(browser, '1234-5678');
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('eight letters');
  });

  it('sends a signed-out browser to sign in first, then back to the code', async () => {
    const res = await new Browser().get('/oauth/device?user_code=BCDF-GHJK');
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe(`/users/sign_in?return_to=${encodeURIComponent('/oauth/device?user_code=BCDF-GHJK')}`);
  });

  it('refuses a form without the session’s token, and cannot be framed', async () => {
    const { browser } = await signedIn('device');
    const res = await browser.post('/oauth/device', { user_code: 'BCDF-GHJK' });
    expect(res.status).toBe(403);
    const page = await browser.get('/oauth/device');
    expect(page.headers.get('X-Frame-Options')).toBe('DENY');
    expect(page.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
  });
});
