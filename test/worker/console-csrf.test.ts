// Every console page and form, found by visiting them as an administrator who owns a group and
// a project with pending requests: the same headers as every page, no script, a CSRF token in
// every POST form, and every form refusing a forged submission with nothing changed.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createGroup, createProject, startWorker } from './support/namespaces';
import { consoleSession, consoleUser, type ConsoleUser } from './support/console';
import { ADMIN, Browser, call, ORIGIN } from './support/http';
import { registerApp } from './support/world';

interface Visited {
  path: string;
  res: Response;
  html: string;
}

describe('console pages and forms', () => {
  const pages: Visited[] = [];
  let admin: ConsoleUser;
  let requester: ConsoleUser;
  let group: { id: number; full_path: string };
  let project: { id: number; full_path: string };
  let browser: Browser;
  let csrf: string;
  let pat: { id: number; token: string };

  beforeAll(async () => {
    await startWorker();
    admin = await consoleUser('adm', { admin: true });
    requester = await consoleUser('req');
    group = await createGroup(admin);
    project = await createProject(admin, { namespace_id: group.id });
    await as(requester).post(`/groups/${group.id}/access_requests`);
    await as(requester).post(`/projects/${project.id}/access_requests`);
    await as(admin).post(`/groups/${group.id}/members`, { user_id: (await consoleUser('mem')).id, access_level: 30 });
    const app = await registerApp(['https://app.example/cb']);
    pat = (await (await as(admin).post('/user/personal_access_tokens', { name: 'kept', scopes: ['api'] })).json()) as { id: number; token: string };
    const impersonation = (await (await call(`/api/v4/users/${requester.id}/impersonation_tokens`, { headers: ADMIN })).json()) as { id: number }[];
    const hook = (await (await as(admin).post(`/projects/${project.id}/hooks`, { url: 'https://hooks.example.com/knock' })).json()) as { id: number };
    ({ browser, csrf } = await consoleSession(admin));
    const paths = [
      '/',
      '/explore',
      '/-/profile',
      `/groups/${group.full_path}`,
      `/${project.full_path}`,
      `/${project.full_path}/-/project_members`,
      `/${project.full_path}/-/project_members?tab=access_requests`,
      `/${project.full_path}/edit`,
      `/${project.full_path}/-/hooks`,
      `/${project.full_path}/-/audit_events`,
      `/groups/${group.full_path}/-/edit`,
      `/${admin.username}`,
      `/groups/${group.id}/-/access_requests/${requester.id}/deny`,
      `/projects/${project.id}/-/members/${admin.id}/remove`,
      `/projects/${project.id}/-/hooks/${hook.id}`,
      `/projects/${project.id}/-/hooks/${hook.id}/delete`,
      '/admin/users',
      `/admin/users/${requester.id}`,
      `/admin/users/${requester.id}/delete`,
      `/admin/users/${requester.id}/impersonation_tokens/${impersonation[0].id}/revoke`,
      `/-/profile/personal_access_tokens/${pat.id}/revoke`,
      '/admin/applications',
      `/admin/applications/${app.id}/delete`,
    ];
    for (const path of paths) {
      const res = await browser.get(path);
      pages.push({ path, res, html: await res.text() });
    }
  }, 60_000);

  it('answer every page with 200', () => {
    for (const { path, res } of pages) expect(res.status, path).toBe(200);
  });

  it('render every page in standards mode: it starts with <!DOCTYPE html>', async () => {
    const others = [
      { path: '/users/sign_in', html: await (await new Browser().get('/users/sign_in')).text() },
      { path: '/nope', html: await (await browser.get('/nope')).text() },
    ];
    for (const { path, html } of [...pages, ...others]) expect(html.slice(0, 15), path).toBe('<!DOCTYPE html>');
  });

  it('send the security headers of every page, and no-store', () => {
    for (const { path, res } of pages) {
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
  });

  it('have no script, inline style or event handler', () => {
    for (const { path, html } of pages) {
      expect(html, path).not.toMatch(/<script/i);
      expect(html, path).not.toMatch(/\sstyle=/i);
      expect(html, path).not.toMatch(/\son[a-z]+=/i);
    }
  });

  it('put the session CSRF token in every POST form, and label every input', () => {
    let forms = 0;
    for (const { path, html } of pages) {
      for (const form of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
        if (/method="get"/.test(form[1])) continue;
        forms++;
        expect(form[1], path).toMatch(/method="post"/);
        expect(form[2], `${path}: ${form[1]}`).toContain(`name="authenticity_token" value="${csrf}"`);
      }
      for (const input of html.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
        if (/type="hidden"/.test(input[2])) continue;
        const id = /id="([^"]+)"/.exec(input[2])?.[1];
        const labelled = /aria-label="/.test(input[2]) || (id && html.includes(`for="${id}"`)) || /type="(checkbox|radio)"/.test(input[2]);
        expect(labelled, `${path}: ${input[0]}`).toBeTruthy();
      }
    }
    expect(forms).toBeGreaterThanOrEqual(20);
  });

  it('refuse every form submitted without the right token or from another origin, and nothing changes', async () => {
    const actions = new Set<string>();
    for (const { html } of pages) for (const m of html.matchAll(/<form method="post" action="([^"]+)"/g)) actions.add(m[1]);
    expect(actions.size).toBeGreaterThanOrEqual(15);
    const other = await consoleSession(await consoleUser('oth'));
    const fields = { access_level: '30', expires_at: '', username: requester.username, name: 'Forged', password: 'forged-password', redirect_uri: 'https://x.example/cb', scopes: 'api', url: 'https://evil.example.com/', trigger: 'member_events', return_to: '/' };
    const forgeries: [string, Record<string, string>, Record<string, string>][] = [
      ['no token', {}, {}],
      ["another session's token", { authenticity_token: other.csrf }, {}],
      ['a garbage token', { authenticity_token: 'A'.repeat(32) }, {}],
      ['the right token from another origin', { authenticity_token: csrf }, { Origin: 'https://evil.example' }],
      ['the right token from a null origin', { authenticity_token: csrf }, { Origin: 'null' }],
    ];
    for (const action of actions) {
      for (const [how, token, headers] of forgeries) {
        const res = await browser.post(action, { ...fields, ...token }, headers);
        expect(res.status, `${action}: ${how}`).toBe(403);
        expect(res.headers.get('location'), `${action}: ${how}`).toBeNull();
      }
    }
    // Still signed in, requests still pending, members and applications as they were.
    expect((await browser.get('/')).status).toBe(200);
    for (const kind of ['groups', 'projects']) {
      const id = kind === 'groups' ? group.id : project.id;
      const pending = (await (await call(`/api/v4/${kind}/${id}/access_requests`, { headers: ADMIN })).json()) as { username: string }[];
      expect(pending.map((r) => r.username)).toEqual([requester.username]);
    }
    const members = (await (await call(`/api/v4/groups/${group.id}/members`, { headers: ADMIN })).json()) as unknown[];
    expect(members).toHaveLength(2);
    expect(((await (await call('/api/v4/users?search=Forged', { headers: ADMIN })).json()) as unknown[]).length).toBe(0);
    // The requester still active with their token, the personal access token still working, no new one.
    expect((await call('/api/v4/user', { headers: requester.headers })).status).toBe(200);
    expect((await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': pat.token } })).status).toBe(200);
    const tokenNames = ((await (await call(`/api/v4/personal_access_tokens?user_id=${admin.id}`, { headers: ADMIN })).json()) as { name: string }[]).map((t) => t.name);
    expect(tokenNames).toContain('kept');
    expect(tokenNames).not.toContain('Forged');
    const hooks = (await (await call(`/api/v4/projects/${project.id}/hooks`, { headers: ADMIN })).json()) as { url: string }[];
    expect(hooks.map((h) => h.url)).toEqual(['https://hooks.example.com/knock']);
  });

  it('answer an unreadable form body with the form-expired page, never a 500', async () => {
    for (const action of [`/groups/${group.id}/-/settings`, '/admin/users', `/admin/users/${requester.id}/block`, '/-/profile/personal_access_tokens', '/-/profile/sign_out_everywhere']) {
      for (const type of ['multipart/form-data', 'application/x-www-form-urlencoded']) {
        const res = await call(action, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': type, Origin: ORIGIN, Cookie: `knock_session=${browser.cookies.get('knock_session')}` }, body: '%%%&&=\u0000' });
        expect(res.status, `${action} ${type}`).toBe(403);
      }
    }
  });
});
