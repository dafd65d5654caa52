// The administration pages: only administrators see them (others get 404, as in GitLab), and
// they create users, impersonation tokens and OAuth applications through the API's own rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf } from './support/console';
import { ADMIN, Browser, call, unique } from './support/http';
import { quickUser } from './support/world';

beforeAll(startWorker, 30_000);

const userByName = async (username: string) => ((await (await call(`/api/v4/users?username=${username}`, { headers: ADMIN })).json()) as { id: number }[])[0];

describe('administration', () => {
  it('is a 404 for anyone but an administrator, for pages and forms', async () => {
    const { browser, csrf } = await consoleSession(await consoleUser('usr'));
    expect(await (await browser.get('/')).text()).not.toContain('href="/admin/users"');
    for (const path of ['/admin/users', '/admin/applications', '/admin/users/1']) expect((await browser.get(path)).status, path).toBe(404);
    const username = unique('made');
    const res = await browser.post('/admin/users', { authenticity_token: csrf, username, name: 'Made', password: 'long-enough-pw' });
    expect(res.status).toBe(404);
    expect((await browser.post('/admin/applications', { authenticity_token: csrf, name: 'x', redirect_uri: 'https://x.example/cb' })).status).toBe(404);
    expect(await userByName(username)).toBeUndefined();
  });

  it('creates a user who can then sign in; errors beside the fields, never echoing the password', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const { browser, csrf } = await consoleSession(admin);
    expect(await (await browser.get('/')).text()).toContain('href="/admin/users"');
    const username = unique('dave');
    const created = await submit(browser, '/admin/users', { authenticity_token: csrf, username, name: 'Dave', email: `${username}@example.test`, password: 'dave-password-1' });
    expect(noticeOf(created.html)).toBe(`Created @${username}. They can sign in now.`);
    expect(created.html).toContain(`@${username}`);
    expect((await new Browser().signIn({ username, password: 'dave-password-1' })).status).toBe(303);

    const taken = await submit(browser, '/admin/users', { authenticity_token: csrf, username, name: 'Dave again', password: 'secret-password-9' });
    expect(fieldErrorsOf(taken.html)).toEqual(['Username has already been taken.']);
    expect(taken.html).toMatch(/id="new-username"[^>]*aria-invalid="true"/);
    expect(taken.html).toContain('value="Dave again"');
    expect(taken.html).not.toContain('secret-password-9');

    const short = await submit(browser, '/admin/users', { authenticity_token: csrf, username: unique('eve'), name: 'Eve', password: 'short' });
    expect(fieldErrorsOf(short.html)).toEqual(['Password is invalid.']);
  });

  it('an administrator who gives up their own flag lands on the dashboard, saying so, and the area is closed to them', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const { browser, csrf } = await consoleSession(admin);
    const saved = await submit(browser, `/admin/users/${admin.id}`, { authenticity_token: csrf, username: admin.username, name: 'No Longer Admin', email: '', admin: 'false' });
    expect(saved.res.headers.get('location')).toBe('/');
    expect(saved.page?.status).toBe(200);
    expect(noticeOf(saved.html)).toBe(`Saved @${admin.username}.`);
    expect((await browser.get('/admin/users')).status).toBe(404);
  });

  it('issues an impersonation token shown once, which works, and revokes it', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const target = await consoleUser('tgt');
    const { browser, csrf } = await consoleSession(admin);
    const res = await browser.post(`/admin/users/${target.id}/impersonation_tokens`, { authenticity_token: csrf, name: 'script', scopes: 'read_api' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const token = /id="issued-token" readonly="" value="([^"]+)"/.exec(html)?.[1];
    expect(token).toMatch(/^knock_at_/);
    const me = await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': token! } });
    expect(((await me.json()) as { username: string }).username).toBe(target.username);
    const later = await (await browser.get(`/admin/users/${target.id}`)).text();
    expect(later).not.toContain(token!);
    const id = /impersonation_tokens\/(\d+)\/revoke/.exec(later)?.[1];
    const revoked = await submit(browser, `/admin/users/${target.id}/impersonation_tokens/${id}/revoke`, { authenticity_token: csrf });
    expect(noticeOf(revoked.html)).toBe('Revoked the token script. It stopped working at once.');
    expect((await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': token! } })).status).toBe(401);

    const bad = await browser.post(`/admin/users/${target.id}/impersonation_tokens`, { authenticity_token: csrf, name: 'x', expires_at: '2020-01-01', scopes: 'api' });
    expect(bad.status).toBe(400);
    expect(fieldErrorsOf(await bad.text())).toEqual(['Expiry date cannot be a date in the past.']);
  });

  it('registers an application with its secret shown once, and deletes it after a confirmation', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const { browser, csrf } = await consoleSession(admin);
    const name = unique('App ');
    const res = await browser.post('/admin/applications', { authenticity_token: csrf, name, redirect_uri: 'https://app.example/cb\nhttp://127.0.0.1/cb', scopes: 'api', confidential: 'true' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(/id="created-secret" readonly="" value="(knock_cs_[^"]+)"/.exec(html)).not.toBeNull();
    const list = await (await browser.get('/admin/applications')).text();
    expect(list).not.toContain('knock_cs_');
    const id = new RegExp(`href="/admin/applications/(\\d+)/delete" aria-label="Delete ${name}"`).exec(list)?.[1];
    expect(id).toBeDefined();
    expect(textOf(await (await browser.get(`/admin/applications/${id}/delete`)).text())).toContain(`Delete ${name}?`);
    const deleted = await submit(browser, `/admin/applications/${id}/delete`, { authenticity_token: csrf });
    expect(noticeOf(deleted.html)).toBe('Deleted the application and ended its tokens.');
    expect(deleted.html).not.toContain(name);

    const bad = await browser.post('/admin/applications', { authenticity_token: csrf, name: 'Bad', redirect_uri: 'not a uri', scopes: 'api' });
    expect(bad.status).toBe(400);
    expect(fieldErrorsOf(await bad.text())).toEqual(['Redirect URIs is invalid.']);
  });
});

const apiUser = async (id: number) => (await (await call(`/api/v4/users/${id}`, { headers: ADMIN })).json()) as { username: string; name: string; email: string; is_admin: boolean; state: string };
/** The actions of a user's page: the buttons and links it offers. */
const offered = (html: string) => [...html.matchAll(/<button[^>]*>([^<]*)<\/button>|<a class="button danger" href="[^"]*">([^<]*)<\/a>/g)].map((m) => textOf(m[1] ?? m[2]));

describe("a user's administration page", () => {
  it('edits username, name, email and the administrator flag; a new password ends their sessions', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const target = await consoleUser('tgt');
    const theirs = await consoleSession(target);
    const { browser, csrf } = await consoleSession(admin);
    const username = unique('renamed');
    const saved = await submit(browser, `/admin/users/${target.id}`, { authenticity_token: csrf, username, name: 'Renamed Person', email: `${username}@example.test`, admin: 'true', password: '' });
    expect(noticeOf(saved.html)).toBe(`Saved @${username}.`);
    expect(await apiUser(target.id)).toMatchObject({ username, name: 'Renamed Person', email: `${username}@example.test`, is_admin: true, state: 'active' });
    expect((await theirs.browser.get('/')).status, 'no new password: their session stays').toBe(200);

    // Unchecking the box takes the flag away; a new password signs them out everywhere.
    const again = await submit(browser, `/admin/users/${target.id}`, { authenticity_token: csrf, username, name: 'Renamed Person', email: '', password: 'a-new-password-1' });
    expect(noticeOf(again.html)).toBe(`Saved @${username}. The new password ended their browser sessions.`);
    expect((await apiUser(target.id)).is_admin).toBe(false);
    expect((await theirs.browser.get('/')).status).toBe(302);
    expect((await new Browser().signIn({ username, password: 'a-new-password-1' })).status).toBe(303);
  });

  it("shows the API's refusals beside their fields, with what was typed, and changes nothing", async () => {
    const admin = await consoleUser('adm', { admin: true });
    const [target, other] = [await consoleUser('tgt'), await consoleUser('oth')];
    const { browser, csrf } = await consoleSession(admin);
    const edit = (fields: Record<string, string>) => submit(browser, `/admin/users/${target.id}`, { authenticity_token: csrf, username: target.username, name: target.name, ...fields });
    const taken = await edit({ username: other.username, name: 'Typed Name' });
    expect(fieldErrorsOf(taken.html)).toEqual(['Username has already been taken.']);
    expect(taken.html).toMatch(/id="edit-username"[^>]*aria-invalid="true"/);
    expect(taken.html).toContain('value="Typed Name"');
    expect(fieldErrorsOf((await edit({ email: `${other.username}@example.test` })).html)).toEqual(['Email has already been taken.']);
    expect(fieldErrorsOf((await edit({ email: 'not an email' })).html)).toEqual(['Email is invalid.']);
    const short = await edit({ password: 'short-1' });
    expect(fieldErrorsOf(short.html)).toEqual(['Password is invalid.']);
    expect(short.html).not.toContain('short-1');
    expect(await apiUser(target.id)).toMatchObject({ username: target.username, name: target.name, email: `${target.username}@example.test` });

    // The built-in administrator stays an administrator: the service says so, as a flash on the page.
    const root = await userByName('root');
    const kept = await submit(browser, `/admin/users/${root.id}`, { authenticity_token: csrf, username: 'root', name: 'Administrator' });
    expect(fieldErrorsOf(kept.html)).toEqual(['The built-in administrator must stay an administrator.']);
    expect((await apiUser(root.id)).is_admin).toBe(true);
  });

  it("blocks a user: their open session ends and the sign-in page says why; unblocking does not bring it back", async () => {
    const admin = await consoleUser('adm', { admin: true });
    const target = await consoleUser('tgt');
    const theirs = await consoleSession(target);
    const { browser, csrf } = await consoleSession(admin);
    const page = await (await browser.get(`/admin/users/${target.id}`)).text();
    expect(offered(page)).toEqual(expect.arrayContaining([`Block @${target.username}`, `Deactivate @${target.username}`, `Delete @${target.username}`]));
    expect(offered(page)).not.toContain(`Unblock @${target.username}`);

    const blocked = await submit(browser, `/admin/users/${target.id}/block`, { authenticity_token: csrf });
    expect(noticeOf(blocked.html)).toBe(`Blocked @${target.username}.`);
    expect(offered(blocked.html)).toContain(`Unblock @${target.username}`);
    expect(offered(blocked.html)).not.toContain(`Deactivate @${target.username}`);
    expect((await apiUser(target.id)).state).toBe('blocked');
    expect((await call('/api/v4/user', { headers: target.headers })).status).toBe(401);

    const next = await theirs.browser.get('/explore');
    expect(next.status).toBe(302);
    expect(next.headers.get('location')).toBe('/users/sign_in?return_to=%2Fexplore');
    const signIn = await theirs.browser.get(next.headers.get('location')!);
    expect(textOf(await signIn.text())).toContain('Your account has been blocked. Contact your administrator if you think this is an error.');
    expect((await theirs.browser.post('/-/profile/sign_out_everywhere', { authenticity_token: theirs.csrf })).headers.get('location')).toMatch(/^\/users\/sign_in/);

    // A blocked user cannot be deactivated (GitLab's rule): no button, and a forged form is refused with its reason.
    const refused = await submit(browser, `/admin/users/${target.id}/deactivate`, { authenticity_token: csrf });
    expect(fieldErrorsOf(refused.html)).toEqual(['Error occurred. A blocked user cannot be deactivated.']);
    expect((await apiUser(target.id)).state).toBe('blocked');

    const unblocked = await submit(browser, `/admin/users/${target.id}/unblock`, { authenticity_token: csrf });
    expect(noticeOf(unblocked.html)).toBe(`Unblocked @${target.username}.`);
    const after = await theirs.browser.get('/');
    expect(after.status, 'the session the block ended stays ended').toBe(302);
    expect(textOf(await (await theirs.browser.get('/users/sign_in')).text())).not.toContain('blocked');
    expect((await new Browser().signIn(target)).status).toBe(303);
  });

  it('deactivates and activates; offers nothing GitLab refuses: no block for oneself or the built-in administrator', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const target = await consoleUser('tgt');
    const theirs = await consoleSession(target);
    const { browser, csrf } = await consoleSession(admin);
    const deactivated = await submit(browser, `/admin/users/${target.id}/deactivate`, { authenticity_token: csrf });
    expect(noticeOf(deactivated.html)).toBe(`Deactivated @${target.username}.`);
    expect(offered(deactivated.html)).toEqual(expect.arrayContaining([`Activate @${target.username}`, `Block @${target.username}`]));
    const signIn = await theirs.browser.get('/users/sign_in');
    expect(textOf(await signIn.text())).toContain('Your account has been deactivated. Contact your administrator to reactivate it.');
    const again = await submit(browser, `/admin/users/${target.id}/deactivate`, { authenticity_token: csrf });
    expect(noticeOf(again.html)).toBe(`@${target.username} was already deactivated.`);
    const activated = await submit(browser, `/admin/users/${target.id}/activate`, { authenticity_token: csrf });
    expect(noticeOf(activated.html)).toBe(`Activated @${target.username}.`);
    expect((await apiUser(target.id)).state).toBe('active');

    const own = await (await browser.get(`/admin/users/${admin.id}`)).text();
    expect(offered(own)).not.toContain(`Block @${admin.username}`);
    const selfBlock = await submit(browser, `/admin/users/${admin.id}/block`, { authenticity_token: csrf });
    expect(fieldErrorsOf(selfBlock.html)).toEqual(['The API initiating user cannot be blocked by the API.']);
    const root = await userByName('root');
    const rootPage = await (await browser.get(`/admin/users/${root.id}`)).text();
    expect(offered(rootPage).filter((b) => /^(Block|Deactivate|Delete) /.test(b))).toEqual([]);
    expect(textOf(rootPage)).toContain('This account cannot be blocked, deactivated or deleted.');
    expect((await browser.get(`/admin/users/${root.id}/delete`)).status).toBe(200);
    const rootDelete = await submit(browser, `/admin/users/${root.id}/delete`, { authenticity_token: csrf });
    expect(fieldErrorsOf(rootDelete.html)).toEqual(['The built-in administrator cannot be deleted.']);
  });

  it("deletes a user after a confirmation; the only Owner of a group is refused with the service's reason", async () => {
    const admin = await consoleUser('adm', { admin: true });
    const [target, owner] = [await consoleUser('tgt'), await consoleUser('own')];
    const theirs = await consoleSession(target);
    const { browser, csrf } = await consoleSession(admin);
    const confirm = textOf(await (await browser.get(`/admin/users/${target.id}/delete`)).text());
    expect(confirm).toContain(`Delete @${target.username}?`);
    expect(confirm).toContain('Cancel');
    expect((await apiUser(target.id)).state, 'the confirmation alone deletes nothing').toBe('active');
    const deleted = await submit(browser, `/admin/users/${target.id}/delete`, { authenticity_token: csrf });
    expect(noticeOf(deleted.html)).toBe(`Deleted @${target.username}.`);
    expect(deleted.html).toContain('<h1>Users</h1>');
    expect((await call(`/api/v4/users/${target.id}`, { headers: ADMIN })).status).toBe(404);
    expect((await browser.get(`/admin/users/${target.id}`)).status).toBe(404);
    expect((await theirs.browser.get('/')).status).toBe(302);

    await call('/api/v4/groups', { method: 'POST', headers: { ...owner.headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Solo', path: unique('solo') }) });
    const refused = await submit(browser, `/admin/users/${owner.id}/delete`, { authenticity_token: csrf });
    expect(fieldErrorsOf(refused.html)).toEqual(['User cannot be removed while is the sole-owner of a group.']);
    expect(refused.html).toContain(`@${owner.username}`);
    expect((await apiUser(owner.id)).state).toBe('active');
  });

  it('is refused to a non-administrator (404) and a signed-out visitor (to sign in), with nothing changed', async () => {
    const target = await consoleUser('tgt');
    const { browser, csrf } = await consoleSession(await consoleUser('usr'));
    const visitor = new Browser();
    const forms: [string, Record<string, string>][] = [
      [`/admin/users/${target.id}`, { username: 'taken-over', name: 'Taken Over', admin: 'true' }],
      ...['block', 'deactivate', 'delete'].map((a): [string, Record<string, string>] => [`/admin/users/${target.id}/${a}`, {}]),
    ];
    for (const [path, fields] of forms) {
      expect((await browser.post(path, { authenticity_token: csrf, ...fields })).status, path).toBe(404);
      const signedOut = await visitor.post(path, fields);
      expect(signedOut.status, path).toBe(303);
      expect(signedOut.headers.get('location'), path).toBe('/users/sign_in');
    }
    expect((await browser.get(`/admin/users/${target.id}/delete`)).status).toBe(404);
    expect(await apiUser(target.id)).toMatchObject({ username: target.username, is_admin: false, state: 'active' });
  });
});

describe('the users list', () => {
  it('pages 20 at a time and finds users by name', async () => {
    const admin = await consoleUser('adm', { admin: true });
    const tag = unique('lst');
    for (let i = 0; i < 21; i++) await quickUser(`${tag}x`);
    const { browser } = await consoleSession(admin);
    const first = await (await browser.get(`/admin/users?search=${tag}`)).text();
    expect(textOf(first)).toContain('Users (21)');
    expect(first.match(/href="\/admin\/users\/\d+"/g)).toHaveLength(20);
    expect(textOf(first)).toContain('Page 1 of 2');
    const next = /<a href="([^"]+)" rel="next"/.exec(first)?.[1].replace(/&amp;/g, '&');
    expect(next).toBe(`/admin/users?search=${tag}&page=2`);
    const second = await (await browser.get(next!)).text();
    expect(second.match(/href="\/admin\/users\/\d+"/g)).toHaveLength(1);
    expect(second).toMatch(/id="user-search"[^>]*value="[^"]*"/);
    expect(textOf(await (await browser.get(`/admin/users?search=${unique('nobody')}`)).text())).toContain('Users (0)');
  });
});
