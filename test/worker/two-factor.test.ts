// A second factor: TOTP enrolment on the account page, sign-in asking for it (codes computed here
// from the secret the page shows), recovery codes used once, an administrator's reset, and the
// API's `two_factor_enabled`. Passkeys are proven in Chromium (test/e2e/two-factor-passkey.test.ts).
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromBase32, hotp, totpStep } from '../../worker/auth/totp';
import { consoleSession, consoleUser, noticeOf, textOf } from './support/console';
import { ADMIN, Browser, call, type TestUser } from './support/http';
import { dumpTables, grantsStub } from './support/storage';
import { startWorker } from './support/namespaces';

beforeAll(startWorker, 30_000);

const PAGE = '/-/profile/two_factor_auth';

/** The code an authenticator app shows for `secret` (base32) at `offset` steps from now. */
const codeFor = async (secret: string, offset = 0) => hotp(fromBase32(secret)!, totpStep(Date.now()) + offset);

const recoveryCodesOf = (html: string) => [...html.matchAll(/<li><code>([0-9a-f]{16})<\/code><\/li>/g)].map((m) => m[1]);

/** Enrols TOTP for `user` through the account page; the secret and the recovery codes shown once. */
const enrolTotp = async (user: TestUser) => {
  const { browser, csrf } = await consoleSession(user);
  const page = await (await browser.get(PAGE)).text();
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page)?.[1];
  expect(secret).toBeDefined();
  expect(page).toContain(`otpauth://totp/Knock:${user.username}?secret=${secret}`);
  const res = await browser.post(PAGE, { authenticity_token: csrf, pin_code: await codeFor(secret!) });
  expect(res.status).toBe(201);
  const html = await res.text();
  expect(noticeOf(html)).toBe('You have set up two-factor authentication with an authenticator app.');
  return { secret: secret!, recoveryCodes: recoveryCodesOf(html), browser, csrf };
};

/** Signs in with the password: the answer, and the browser waiting for its second step. */
const signInWithPassword = async (user: TestUser, returnTo = '/') => {
  const browser = new Browser();
  const res = await browser.signIn(user, returnTo);
  return { browser, res };
};

const secondStep = async (browser: Browser, code: string) => {
  const page = await browser.get('/users/two_factor');
  expect(page.status).toBe(200);
  return browser.post('/users/two_factor', { authenticity_token: Browser.csrf(await page.text()), otp_attempt: code });
};

const apiUser = async (user: TestUser) => (await (await call('/api/v4/user', { headers: user.headers })).json()) as { two_factor_enabled?: boolean };
const adminView = async (id: number) => (await (await call(`/api/v4/users/${id}`, { headers: ADMIN })).json()) as { two_factor_enabled?: boolean };

describe('TOTP', () => {
  it('enrols with a code from the app, shows ten recovery codes once, and tells the API', async () => {
    const carol = await consoleUser('carol');
    expect((await apiUser(carol)).two_factor_enabled).toBe(false);
    const { recoveryCodes, browser } = await enrolTotp(carol);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    // Shown once: the page afterwards has no codes and no secret.
    const again = await (await browser.get(PAGE)).text();
    expect(recoveryCodesOf(again)).toEqual([]);
    expect(again).not.toContain('totp-secret');
    expect(textOf(again)).toContain('10 recovery codes left');
    expect((await apiUser(carol)).two_factor_enabled).toBe(true);
    expect((await adminView(carol.id)).two_factor_enabled).toBe(true);
  });

  it('keeps the secret sealed and the recovery codes as keyed hashes, in the user\'s own object', async () => {
    const user = await consoleUser('vault');
    const { secret, recoveryCodes } = await enrolTotp(user);
    const stored = JSON.stringify(await dumpTables(grantsStub(user.id)));
    expect(stored).toContain('"sealed_secret":"v1.');
    const raw = fromBase32(secret)!;
    const base64url = btoa(String.fromCharCode(...raw)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    for (const clear of [secret, base64url, ...recoveryCodes]) expect(stored).not.toContain(clear);
    expect(JSON.parse(stored).recovery_codes).toHaveLength(10);
  });

  it("tells the Directory from the User object's alarm when a crash stopped the push", async () => {
    const user = await consoleUser('crash');
    await enrolTotp(user);
    const stub = grantsStub(user.id);
    // What disable()'s transaction leaves, with the alarm it sets before pushing: the state a crash
    // between the two would leave.
    await runInDurableObject(stub, async (_instance, state) => {
      for (const table of ['totp', 'passkeys', 'recovery_codes']) state.storage.sql.exec(`DELETE FROM ${table}`);
      state.storage.sql.exec('UPDATE two_factor_flag SET enabled = 0, pushed = 0');
      await state.storage.setAlarm(Date.now());
    });
    expect((await adminView(user.id)).two_factor_enabled).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await adminView(user.id)).two_factor_enabled).toBe(false);
    expect((await apiUser(user)).two_factor_enabled).toBe(false);
    expect((await dumpTables(stub)).two_factor_flag).toEqual([{ singleton: 1, enabled: 0, pushed: 1 }]);
  });

  it('refuses a wrong code at enrolment', async () => {
    const user = await consoleUser('wrong');
    const { browser, csrf } = await consoleSession(user);
    await browser.get(PAGE);
    const res = await browser.post(PAGE, { authenticity_token: csrf, pin_code: '000000' });
    expect(res.status).toBe(303);
    expect(textOf(await (await browser.get(PAGE)).text())).toContain('Invalid pin code.');
    expect((await apiUser(user)).two_factor_enabled).toBe(false);
  });

  it('makes sign-in ask for the code: no session after the password alone, one after the code; the same code never twice', async () => {
    const carol = await consoleUser('carol');
    const { secret } = await enrolTotp(carol);
    const { browser, res } = await signInWithPassword(carol, '/-/profile');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/users/two_factor');
    expect((await browser.get('/')).status).toBe(302);

    // The enrolment used this step's code; the next step's is in the window.
    const code = await codeFor(secret, 1);
    const wrong = await secondStep(browser, code === '123456' ? '654321' : '123456');
    expect(wrong.status).toBe(401);
    expect(textOf(await wrong.text())).toContain('Invalid two-factor code.');
    const done = await secondStep(browser, code);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/-/profile');
    expect((await browser.get('/')).status).toBe(200);

    const replay = await signInWithPassword(carol);
    expect((await secondStep(replay.browser, code)).status).toBe(401);
    expect((await replay.browser.get('/')).status).toBe(302);
  });

  it('takes each recovery code once', async () => {
    const user = await consoleUser('recover');
    const { recoveryCodes } = await enrolTotp(user);
    const first = await signInWithPassword(user);
    expect((await secondStep(first.browser, recoveryCodes[0].toUpperCase())).status).toBe(303);
    const second = await signInWithPassword(user);
    expect((await secondStep(second.browser, recoveryCodes[0])).status).toBe(401);
    expect((await secondStep(second.browser, recoveryCodes[1])).status).toBe(303);
  });

  it('ends the second step after five wrong codes: the password must be given again', async () => {
    const user = await consoleUser('five');
    const { secret } = await enrolTotp(user);
    const { browser } = await signInWithPassword(user);
    for (let i = 0; i < 4; i++) expect((await secondStep(browser, 'ffffffffffffffff')).status).toBe(401);
    const page = await browser.get('/users/two_factor');
    const fifth = await browser.post('/users/two_factor', { authenticity_token: Browser.csrf(await page.text()), otp_attempt: 'ffffffffffffffff' });
    expect(fifth.status).toBe(401);
    expect(textOf(await fifth.text())).toContain('Sign in again.');
    expect((await browser.get('/users/two_factor')).headers.get('location')).toBe('/users/sign_in');
    const page2 = await browser.get('/users/sign_in');
    const late = await browser.post('/users/two_factor', { authenticity_token: Browser.csrf(await page2.text()), otp_attempt: await codeFor(secret, 1) });
    expect((await browser.get('/')).status).toBe(302);
    expect(late.status).not.toBe(200);
  });

  it('is turned off by the user with their password; sign-in then needs the password only', async () => {
    const user = await consoleUser('off');
    const { browser, csrf } = await enrolTotp(user);
    const refused = await browser.post(`${PAGE}/disable`, { authenticity_token: csrf, current_password: 'not it' });
    expect(refused.status).toBe(303);
    expect(textOf(await (await browser.get(PAGE)).text())).toContain('You must provide a valid current password.');
    expect((await browser.post(`${PAGE}/disable`, { authenticity_token: csrf, current_password: user.password })).status).toBe(303);
    expect((await apiUser(user)).two_factor_enabled).toBe(false);
    const { res } = await signInWithPassword(user);
    expect(res.headers.get('location')).toBe('/');
  });
});

describe('signing in with a passkey alone', () => {
  it('offers it on the sign-in page, and refuses an answer without the page\'s sealed challenge or a passkey of the user', async () => {
    const user = await consoleUser('nokey');
    const browser = new Browser();
    const page = await browser.get('/users/sign_in');
    const html = await page.text();
    expect(html).toContain('data-webauthn="get"');
    expect(html).toContain('&quot;userVerification&quot;:&quot;required&quot;');
    expect(browser.cookies.get('knock_passkey_challenge')).toMatch(/^[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]+$/);
    const csrf = Browser.csrf(html);
    const handle = btoa(String(user.id)).replace(/=+$/, '');
    const credential = JSON.stringify({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA', userHandle: handle } });
    const forged = await browser.post('/users/passkey_sign_in', { authenticity_token: csrf, credential });
    expect(forged.status).toBe(303);
    expect(forged.headers.get('location')).toBe('/users/sign_in?passkey=refused');
    expect((await browser.get('/')).status).toBe(302);
    // The challenge was spent with the attempt: without it, nothing is even tried.
    const again = await browser.post('/users/passkey_sign_in', { authenticity_token: csrf, credential });
    expect(again.headers.get('location')).toBe('/users/sign_in?passkey=refused');
    expect(textOf(await (await browser.get('/users/sign_in?passkey=refused')).text())).toContain('That passkey could not sign you in.');
  });
});

describe('PATCH /users/:id/disable_two_factor', () => {
  it('lets an administrator reset a user: 204, then 400 as nothing is left to disable', async () => {
    const user = await consoleUser('reset');
    await enrolTotp(user);
    const path = `/api/v4/users/${user.id}/disable_two_factor`;
    expect((await call(path, { method: 'PATCH', headers: user.headers })).status).toBe(403);
    expect((await call(path, { method: 'PATCH', headers: ADMIN })).status).toBe(204);
    expect((await adminView(user.id)).two_factor_enabled).toBe(false);
    expect((await apiUser(user)).two_factor_enabled).toBe(false);
    const again = await call(path, { method: 'PATCH', headers: ADMIN });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ message: '400 Bad request - Two-factor authentication is not enabled for this user' });
    expect((await signInWithPassword(user)).res.headers.get('location')).toBe('/');
    expect((await call('/api/v4/users/999999999/disable_two_factor', { method: 'PATCH', headers: ADMIN })).status).toBe(404);
  });

  it("is the admin user page's button too, which also resets an administrator", async () => {
    const root = await consoleUser('boss', { admin: true });
    const other = await consoleUser('otheradmin', { admin: true });
    await enrolTotp(other);
    expect((await call(`/api/v4/users/${other.id}/disable_two_factor`, { method: 'PATCH', headers: ADMIN })).status).toBe(403);
    const { browser, csrf } = await consoleSession(root);
    const page = await (await browser.get(`/admin/users/${other.id}`)).text();
    expect(textOf(page)).toContain('Two-factor authentication on');
    const res = await browser.post(`/admin/users/${other.id}/disable_two_factor`, { authenticity_token: csrf });
    expect(res.status).toBe(303);
    expect(noticeOf(await (await browser.get(res.headers.get('location')!)).text())).toBe(`Disabled two-factor authentication of @${other.username}.`);
    expect((await signInWithPassword(other)).res.headers.get('location')).toBe('/');
  });
});
