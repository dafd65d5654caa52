// The administration pages: only administrators see them (others get 404, as in GitLab), and
// they create users, impersonation tokens and OAuth applications through the API's own rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf } from './support/console';
import { ADMIN, Browser, call, unique } from './support/http';

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
    expect(fieldErrorsOf(await bad.text())).toEqual(['Expiry date is invalid.']);
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
