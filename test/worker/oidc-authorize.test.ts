// The authorization endpoint with OpenID Connect's parameters (Core 1.0 §3.1.2): nonce, prompt,
// max_age and login_hint through the real pages, and its errors on the redirect (§3.1.2.6).
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { ORIGIN } from './support/http';
import { startWorker } from './support/namespaces';
import { authorizePath, Browser, consentFields, createUser, csrfOf, exchange, locationParams, signedIn, type App } from './support/oauth';
import { openidApp, signInWithKnock, verifyIdToken } from './support/oidc';

beforeAll(startWorker, 30_000);

const request = (app: App, extra: Record<string, string>) =>
  authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, scope: 'openid profile email', state: 'st', ...extra });

/** An error OpenID Connect sends back on the redirect, with state and iss. */
const expectRedirectedError = (res: Response, app: App, error: string) => {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('Location')!);
  expect(location.origin + location.pathname).toBe(app.redirectUri);
  expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: 'st', iss: ORIGIN });
  expect(location.searchParams.get('code')).toBeNull();
};

/** Signs in on the sign-in page `target` (as a browser following the redirect would); the answer's Location. */
const signInAt = async (browser: Browser, target: URL, user: { username: string; password: string }) => {
  const page = await browser.get(target.pathname + target.search);
  expect(page.status).toBe(200);
  const html = await page.text();
  const res = await browser.post('/users/sign_in', { username: user.username, password: user.password, authenticity_token: csrfOf(html), return_to: target.searchParams.get('return_to')! });
  expect(res.status).toBe(303);
  return { html, location: res.headers.get('Location')! };
};

/** The sign-in page a redirect leads to, as the browser would find it. */
const signInTarget = (res: Response) => {
  expect(res.status).toBe(302);
  return new URL(res.headers.get('Location')!, ORIGIN);
};

describe('prompt=none', () => {
  it('answers login_required when nobody is signed in, consent_required before consent, and the code once consent is remembered', async () => {
    const app = await openidApp();
    expectRedirectedError(await new Browser().get(request(app, { prompt: 'none' })), app, 'login_required');
    const { browser } = await signedIn('none');
    expectRedirectedError(await browser.get(request(app, { prompt: 'none' })), app, 'consent_required');
    await signInWithKnock(browser, app);
    const silent = await browser.get(request(app, { prompt: 'none', nonce: 'silent' }));
    expect(silent.status).toBe(302);
    const code = locationParams(silent).get('code')!;
    const tokens = (await exchange(app, code)) as { id_token?: string };
    expect((await verifyIdToken(tokens.id_token!, app)).payload.nonce).toBe('silent');
  });

  it('answers interaction_required when login_hint names another user than the one signed in', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('hinted');
    await signInWithKnock(browser, app);
    expectRedirectedError(await browser.get(request(app, { prompt: 'none', login_hint: 'somebody-else' })), app, 'interaction_required');
  });

  it('answers login_required when the sign-in is older than max_age', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('aged');
    await signInWithKnock(browser, app);
    advance(3600);
    expectRedirectedError(await browser.get(request(app, { prompt: 'none', max_age: '600' })), app, 'login_required');
  });
});

describe('prompt=consent and prompt=login', () => {
  it('prompt=consent shows the consent page although consent is remembered', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('consent');
    await signInWithKnock(browser, app);
    expect((await browser.get(request(app, {}))).status).toBe(302);
    expect((await browser.get(request(app, { prompt: 'consent' }))).status).toBe(200);
  });

  it('prompt=login signs a signed-in user in again, then comes back without it; auth_time is the new sign-in', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('login');
    const before = await verifyIdToken((await signInWithKnock(browser, app)).id_token!, app);
    advance(120);
    const target = signInTarget(await browser.get(request(app, { prompt: 'login', nonce: 'again' })));
    expect(target.pathname).toBe('/users/sign_in');
    expect(target.searchParams.get('reauthenticate')).toBe('1');
    const returnTo = target.searchParams.get('return_to')!;
    expect(new URL(returnTo, ORIGIN).searchParams.get('prompt')).toBeNull();
    expect(new URL(returnTo, ORIGIN).searchParams.get('nonce')).toBe('again');
    // The sign-in form is shown to the signed-in user, their username filled in.
    const { html, location } = await signInAt(browser, target, user);
    expect(html).toContain(`value="${user.username}"`);
    expect(location).toBe(returnTo);
    const answer = await browser.get(returnTo);
    expect(answer.status).toBe(302);
    const tokens = (await exchange(app, locationParams(answer).get('code')!)) as { id_token?: string };
    const after = await verifyIdToken(tokens.id_token!, app);
    expect(after.payload.auth_time).toBeGreaterThanOrEqual((before.payload.auth_time as number) + 120);
    expect(after.payload.nonce).toBe('again');
  });
});

describe('max_age and login_hint', () => {
  it('max_age shorter than the time since the sign-in asks for a new one; the id_token then says a recent auth_time', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('maxage');
    await signInWithKnock(browser, app);
    advance(3600);
    const target = signInTarget(await browser.get(request(app, { max_age: '600' })));
    const returnTo = target.searchParams.get('return_to')!;
    expect(new URL(returnTo, ORIGIN).searchParams.get('max_age')).toBe('600');
    await signInAt(browser, target, user);
    const answer = await browser.get(returnTo);
    const tokens = (await exchange(app, locationParams(answer).get('code')!)) as { id_token?: string };
    const { payload } = await verifyIdToken(tokens.id_token!, app);
    expect(payload.iat! - (payload.auth_time as number)).toBeLessThanOrEqual(600);
  });

  it('login_hint fills in the username on the sign-in page', async () => {
    const app = await openidApp();
    const bob = await createUser('hint');
    const browser = new Browser();
    const target = signInTarget(await browser.get(request(app, { login_hint: bob.username })));
    expect(target.searchParams.get('login_hint')).toBe(bob.username);
    const page = await browser.get(target.pathname + target.search);
    expect(await page.text()).toContain(`value="${bob.username}"`);
    // Another user signed in: sign in again as the one named, offered in the form.
    const { browser: alice } = await signedIn('alice');
    const again = signInTarget(await alice.get(request(app, { login_hint: bob.username })));
    expect(again.searchParams.get('reauthenticate')).toBe('1');
    expect(again.searchParams.get('login_hint')).toBe(bob.username);
    expect(new URL(again.searchParams.get('return_to')!, ORIGIN).searchParams.get('login_hint')).toBeNull();
  });
});

describe('errors on the redirect', () => {
  it.each([
    ['an unknown prompt', { prompt: 'select_account' }, 'invalid_request'],
    ['prompt=none with login', { prompt: 'none login' }, 'invalid_request'],
    ['a max_age that is no number', { max_age: 'soon' }, 'invalid_request'],
    ['a request object', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
    ['a scope the application was not registered for', { scope: 'openid read_user' }, 'invalid_scope'],
  ])('%s', async (_what, extra, error) => {
    const app = await openidApp();
    const { browser } = await signedIn('err');
    expectRedirectedError(await browser.get(request(app, extra)), app, error);
  });
});

describe('the consent page', () => {
  it('says what each OpenID Connect scope reveals', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('reveal');
    const page = await browser.get(request(app, { scope: 'openid profile email' }));
    const html = await page.text();
    expect(html).toContain('<strong>openid</strong>: Sign you in: it learns your username, your name, the address of your profile, and the groups you belong to');
    expect(html).toContain('<strong>email</strong>: Read your email address.');
    expect(html).toContain('<strong>profile</strong>: Read your name, username and the address of your profile.');
    expect(consentFields(html)).toMatchObject({ scope: 'email openid profile' });
    expect(csrfOf(html)).toBeTruthy();
  });
});
