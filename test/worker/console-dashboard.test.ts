// The dashboard: what needs the viewer (the owners' inbox: approve in one click, deny after a
// confirmation), their own requests and how they ended, and their groups and projects.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createGroup, createProject, startWorker } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf } from './support/console';
import { ADMIN, Browser, call } from './support/http';

beforeAll(startWorker, 30_000);

describe('the dashboard', () => {
  it('lists the requests the viewer may answer, across groups and projects, oldest first', async () => {
    const [owner, bob, carol, other] = [await consoleUser('own'), await consoleUser('bob'), await consoleUser('car'), await consoleUser('oth')];
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const elsewhere = await createGroup(other);
    await as(bob).post(`/groups/${group.id}/access_requests`);
    await as(carol).post(`/projects/${project.id}/access_requests`);
    await as(bob).post(`/groups/${elsewhere.id}/access_requests`);
    const { browser } = await consoleSession(owner);
    const html = await (await browser.get('/')).text();
    expect(textOf(html)).toContain('Needs you (2)');
    const rows = [...html.matchAll(/<li class="request" aria-label="([^"]+)"/g)].map((m) => m[1]);
    expect(rows).toEqual([`${bob.name} (@${bob.username}) for ${group.full_path}`, `${carol.name} (@${carol.username}) for ${project.full_path}`]);
    expect(html).toContain(`action="/groups/${group.id}/-/access_requests/${bob.id}/approve"`);
    expect(html).not.toContain(`/groups/${elsewhere.id}/-/access_requests`);
  });

  it('approves from the dashboard with an expiry and comes back to it', async () => {
    const [owner, bob] = [await consoleUser('own'), await consoleUser('bob')];
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await as(bob).post(`/projects/${project.id}/access_requests`);
    const { browser, csrf } = await consoleSession(owner);
    const expiry = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const { res, html } = await submit(browser, `/projects/${project.id}/-/access_requests/${bob.id}/approve`, {
      authenticity_token: csrf,
      access_level: '30',
      expires_at: expiry,
      return_to: '/',
    });
    expect(res.headers.get('location')).toBe('/');
    expect(noticeOf(html)).toBe(`Approved @${bob.username} as Developer on ${project.full_path} until ${expiry}.`);
    expect(textOf(html)).toContain("No pending access requests. You're all caught up.");
    const member = (await (await as(ADMIN).get(`/projects/${project.id}/members/${bob.id}`)).json()) as { expires_at: string };
    expect(member.expires_at).toBe(expiry);
  });

  it('shows an approve error in the row it belongs to', async () => {
    const [owner, bob] = [await consoleUser('own'), await consoleUser('bob')];
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    await as(bob).post(`/groups/${group.id}/access_requests`);
    await as(bob).post(`/projects/${project.id}/access_requests`);
    const { browser, csrf } = await consoleSession(owner);
    const { html } = await submit(browser, `/projects/${project.id}/-/access_requests/${bob.id}/approve`, {
      authenticity_token: csrf,
      access_level: '5',
      expires_at: '',
      return_to: '/',
    });
    expect(fieldErrorsOf(html)).toEqual(['Access level does not have a valid value.']);
    expect(html).toContain(`aria-describedby="project-${project.id}-request-${bob.id}-level-error"`);
    expect(html).not.toContain(`aria-describedby="group-${group.id}-request-${bob.id}-level-error"`);
  });

  it('shows exactly the inbox of GET /api/v4/access_requests: a project managed through an ancestor group, not a blocked requester', async () => {
    const [owner, bob, blocked] = [await consoleUser('own'), await consoleUser('bob'), await consoleUser('blk')];
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const deep = await createProject(owner, { namespace_id: sub.id });
    const maintainer = await consoleUser('mnt');
    await as(owner).post(`/groups/${group.id}/members`, { user_id: maintainer.id, access_level: 40 });
    await as(bob).post(`/projects/${deep.id}/access_requests`);
    await as(blocked).post(`/projects/${deep.id}/access_requests`);
    expect((await as(ADMIN).post(`/users/${blocked.id}/block`)).status).toBe(201);
    const { browser } = await consoleSession(maintainer);
    const html = await (await browser.get('/')).text();
    const rows = [...html.matchAll(/<li class="request" aria-label="([^"]+)"/g)].map((m) => m[1]);
    expect(rows).toEqual([`${bob.name} (@${bob.username}) for ${deep.full_path}`]);
    expect(textOf(html)).toContain('Needs you (1)');
    // The levels a Maintainer may grant on a project: never Owner.
    const select = new RegExp(`<select id="project-${deep.id}-request-${bob.id}-level"[^>]*>([\\s\\S]*?)</select>`).exec(html)?.[1] ?? '';
    expect([...select.matchAll(/value="(\d+)"/g)].map((m) => m[1])).toEqual(['10', '15', '20', '30', '40']);
    const api = (await (await call('/api/v4/access_requests', { headers: maintainer.headers })).json()) as { username: string; source_id: number }[];
    expect(api.map((r) => `${r.username} ${r.source_id}`)).toEqual([`${bob.username} ${deep.id}`]);
  });

  it("lists the viewer's own requests with Withdraw, then how they ended, and their groups and projects", async () => {
    const [owner, bob] = [await consoleUser('own'), await consoleUser('bob')];
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const other = await createProject(owner, { namespace_id: group.id });
    await as(bob).post(`/projects/${project.id}/access_requests`);
    await as(bob).post(`/projects/${other.id}/access_requests`);
    const expiry = new Date(Date.now() + 9 * 86_400_000).toISOString().slice(0, 10);
    await as(owner).put(`/projects/${other.id}/access_requests/${bob.id}/approve`, { access_level: 20, expires_at: expiry });
    const { browser, csrf } = await consoleSession(bob);
    const before = await (await browser.get('/')).text();
    expect(before).toContain(`aria-label="Withdraw your request for ${project.full_path}"`);
    expect(before).not.toContain(`aria-label="Withdraw your request for ${other.full_path}"`);
    expect(textOf(before)).toContain(`${other.full_path} (project) approved as Reporter until ${expiry}`);
    expect(textOf(before)).toContain(`${project.full_path} (project) waiting for an answer`);
    expect(textOf(before)).toContain('Your groups (0)');

    const { html } = await submit(browser, `/projects/${project.id}/-/access_requests/withdraw`, { authenticity_token: csrf, return_to: '/' });
    expect(noticeOf(html)).toBe(`You withdrew your request for ${project.full_path}.`);
    expect(textOf(html)).toContain(`${project.full_path} (project) withdrawn by you`);
    expect(html).not.toContain('aria-label="Withdraw your request');

    const mine = await (await (await consoleSession(owner)).browser.get('/')).text();
    expect(textOf(mine)).toContain('Your groups (1)');
    expect(textOf(mine)).toContain('Your projects (2)');
    expect(mine).toContain(`href="/${project.full_path}"`);
  });

  it('shows a denied request as denied', async () => {
    const [owner, bob] = [await consoleUser('own'), await consoleUser('bob')];
    const project = await createProject(owner);
    await as(bob).post(`/projects/${project.id}/access_requests`);
    await as(owner).delete(`/projects/${project.id}/access_requests/${bob.id}`);
    const html = await (await (await consoleSession(bob)).browser.get('/')).text();
    expect(textOf(html)).toContain(`${project.full_path} (project) denied`);
  });

  it('sends a signed-out visitor to sign in', async () => {
    const res = await new Browser().get('/');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/users/sign_in');
  });
});

describe('explore', () => {
  it('lists what the viewer can see, and finds by name', async () => {
    const owner = await consoleUser('own');
    const visible = await createGroup(owner);
    const hidden = await createGroup(owner, { visibility: 'private' });
    const { browser } = await consoleSession(await consoleUser('vis'));
    const html = await (await browser.get(`/explore?search=${visible.path}`)).text();
    expect(html).toContain(`href="/groups/${visible.full_path}"`);
    const none = await (await browser.get(`/explore?search=${hidden.path}`)).text();
    expect(none).not.toContain(`href="/groups/${hidden.full_path}"`);
  });
});
