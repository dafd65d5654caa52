// My account: the profile, personal access tokens, the way to authorized applications, and
// signing out everywhere.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, startWorker } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf } from './support/console';
import { ADMIN, Browser, call } from './support/http';

beforeAll(startWorker, 30_000);

describe('my account', () => {
  it('shows the profile and links to authorized applications', async () => {
    const me = await consoleUser('me');
    const { browser } = await consoleSession(me);
    const html = await (await browser.get('/-/profile')).text();
    expect(textOf(html)).toContain(`@${me.username}`);
    expect(html).toContain('href="/oauth/authorized_applications"');
  });

  it('signs out everywhere: every session of the user ends, no other user is touched', async () => {
    const [me, other] = [await consoleUser('me'), await consoleUser('oth')];
    const here = await consoleSession(me);
    const there = await consoleSession(me);
    const someoneElse = await consoleSession(other);
    const res = await here.browser.post('/-/profile/sign_out_everywhere', { authenticity_token: here.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/users/sign_in');
    for (const b of [here.browser, there.browser]) expect((await b.get('/')).status).toBe(302);
    expect((await someoneElse.browser.get('/')).status).toBe(200);
  });

  it('refuses a forged sign-out-everywhere', async () => {
    const me = await consoleUser('me');
    const { browser } = await consoleSession(me);
    expect((await browser.post('/-/profile/sign_out_everywhere', { authenticity_token: 'A'.repeat(32) })).status).toBe(403);
    expect((await browser.get('/')).status).toBe(200);
  });
});

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const issuedToken = (html: string) => /id="issued-token" readonly="" value="([^"]+)"/.exec(html)?.[1];
const whoAmI = async (token: string) => call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': token } });
const apiToken = async (token: string, id: number) =>
  (await (await call(`/api/v4/personal_access_tokens/${id}`, { headers: ADMIN })).json()) as { name: string; scopes: string[]; expires_at: string; revoked: boolean; active: boolean };

describe('my personal access tokens', () => {
  it('creates one with scopes and an expiry, shows it once, lists it, and revokes it after a confirmation', async () => {
    const me = await consoleUser('pat');
    const { browser, csrf } = await consoleSession(me);
    const expiry = inDays(40);
    const res = await browser.post('/-/profile/personal_access_tokens', { authenticity_token: csrf, name: 'laptop script', scopes: ['read_api', 'read_user'], expires_at: expiry });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(noticeOf(html)).toBe('Created the token laptop script.');
    expect(textOf(html)).toContain('copy this token now and keep it somewhere safe. It will not be shown again.');
    const token = issuedToken(html)!;
    expect(token).toMatch(/^knock_at_/);

    // It is the caller's, with what the form asked for, and works at once.
    const me2 = await whoAmI(token);
    expect(me2.status).toBe(200);
    expect(((await me2.json()) as { username: string }).username).toBe(me.username);
    expect((await call('/api/v4/groups', { method: 'POST', headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' }, body: '{}' })).status).toBe(403);

    // Reloading the answer's address shows the list, never the token again.
    const reload = await browser.get('/-/profile/personal_access_tokens');
    expect(reload.headers.get('location')).toBe('/-/profile#personal-access-tokens');
    const page = await (await browser.get('/-/profile')).text();
    expect(page).not.toContain(token);
    const id = Number(/personal_access_tokens\/(\d+)\/revoke" aria-label="Revoke laptop script"/.exec(page)?.[1]);
    expect(await apiToken(token, id)).toMatchObject({ name: 'laptop script', scopes: ['read_api', 'read_user'], expires_at: expiry, active: true });
    const row = /<tr>(?:(?!<\/tr>)[\s\S])*laptop script[\s\S]*?<\/tr>/.exec(page)?.[0] ?? '';
    expect(textOf(row)).toContain('read_api, read_user');
    expect(textOf(row)).toContain(expiry);
    // Created, and last used, just now: in words, as the popup says, with the exact time on hover.
    expect(row.match(/<time datetime="[^"]+" title="\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC">just now<\/time>/g), 'created, and last used just now').toHaveLength(2);

    const confirm = await browser.get(`/-/profile/personal_access_tokens/${id}/revoke`);
    expect(confirm.status).toBe(200);
    const confirmText = textOf(await confirm.text());
    expect(confirmText).toContain('Revoke the token laptop script?');
    expect(confirmText).toContain('Cancel');
    expect((await whoAmI(token)).status, 'the confirmation alone revokes nothing').toBe(200);

    const revoked = await submit(browser, `/-/profile/personal_access_tokens/${id}/revoke`, { authenticity_token: csrf });
    expect(noticeOf(revoked.html)).toBe('Revoked the token laptop script. It stopped working at once.');
    expect(revoked.html).not.toContain('aria-label="Revoke laptop script"');
    expect((await whoAmI(token)).status).toBe(401);
  });

  it('shows the API\'s refusals beside their fields, with what was typed', async () => {
    const me = await consoleUser('pat');
    const { browser, csrf } = await consoleSession(me);
    const post = async (fields: Record<string, string | string[]>) => {
      const res = await browser.post('/-/profile/personal_access_tokens', { authenticity_token: csrf, ...fields });
      expect(res.status).toBe(400);
      return res.text();
    };
    const noScopes = await post({ name: 'no scopes' });
    expect(fieldErrorsOf(noScopes)).toEqual(['Scopes does not have a valid value.']);
    expect(noScopes).toContain('value="no scopes"');
    expect(fieldErrorsOf(await post({ name: 'old', scopes: 'api', expires_at: '2020-01-01' }))).toEqual(['Expiry date cannot be a date in the past.']);
    const far = await post({ name: 'far', scopes: ['api', 'read_user'], expires_at: inDays(400) });
    expect(fieldErrorsOf(far)).toEqual([`Expiry date must be on or before ${inDays(365)}.`]);
    expect(far).toMatch(/id="token-expires"[^>]*aria-invalid="true"/);
    expect(far).toMatch(/value="read_user" checked=""/);
    expect(fieldErrorsOf(await post({ name: '  ', scopes: 'api' }))).toHaveLength(1);
    const listed = (await (await call('/api/v4/personal_access_tokens', { headers: me.headers })).json()) as unknown[];
    expect(listed).toEqual([]);
  });

  it("cannot reach another user's token or an impersonation token by its id: 404, and it keeps working", async () => {
    const [me, other] = [await consoleUser('pat'), await consoleUser('oth')];
    const theirs = (await (await as(other).post('/user/personal_access_tokens', { name: 'theirs', scopes: ['api'] })).json()) as { id: number; token: string };
    const impersonation = (await (await call(`/api/v4/users/${me.id}/impersonation_tokens`, { headers: ADMIN })).json()) as { id: number }[];
    const { browser, csrf } = await consoleSession(me);
    for (const id of [theirs.id, impersonation[0].id, 999_999]) {
      expect((await browser.get(`/-/profile/personal_access_tokens/${id}/revoke`)).status, `confirm ${id}`).toBe(404);
      const res = await browser.post(`/-/profile/personal_access_tokens/${id}/revoke`, { authenticity_token: csrf });
      expect(res.status, `revoke ${id}`).toBe(404);
      expect(await res.text()).not.toContain('{"message"');
    }
    expect((await whoAmI(theirs.token)).status).toBe(200);
    expect((await whoAmI(me.headers['PRIVATE-TOKEN'])).status).toBe(200);
    expect(await (await browser.get('/-/profile')).text()).not.toContain('theirs');
  });

  it('refuses a signed-out visitor and a forged form, and creates nothing', async () => {
    const me = await consoleUser('pat');
    const { browser } = await consoleSession(me);
    const own = (await (await as(me).post('/user/personal_access_tokens', { name: 'kept', scopes: ['api'] })).json()) as { id: number; token: string };
    const visitor = new Browser();
    expect((await visitor.get('/-/profile')).headers.get('location')).toBe('/users/sign_in?return_to=%2F-%2Fprofile');
    for (const path of ['/-/profile/personal_access_tokens', `/-/profile/personal_access_tokens/${own.id}/revoke`]) {
      const signedOut = await visitor.post(path, { name: 'sneaky', scopes: 'api' });
      expect(signedOut.status, path).toBe(303);
      expect(signedOut.headers.get('location'), path).toBe('/users/sign_in');
      expect((await browser.post(path, { authenticity_token: 'A'.repeat(32), name: 'forged', scopes: 'api' })).status, path).toBe(403);
    }
    const listed = (await (await call('/api/v4/personal_access_tokens', { headers: me.headers })).json()) as { name: string }[];
    expect(listed.map((t) => t.name)).toEqual(['kept']);
    expect((await whoAmI(own.token)).status).toBe(200);
  });
});
