// Many requests at once in the console: the dashboard's filter and sort, the bulk form (approve
// with one level and expiry, deny after a confirmation) with its report per request, and the
// header's count of what waits.
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf, type ConsoleUser } from './support/console';
import { ADMIN } from './support/http';
import { as, createGroup, createProject, startWorker, tabOf } from './support/namespaces';

beforeAll(startWorker, 30_000);

const BULK = '/-/access_requests/bulk';
const rowsOf = (html: string) => [...html.matchAll(/<li class="request" aria-label="([^"]+)"/g)].map((m) => m[1]);
const levelOf = async (kind: 'groups' | 'projects', id: number, userId: number) => {
  const res = await as(ADMIN).get(`/${kind}/${id}/members/${userId}`);
  return res.status === 200 ? ((await res.json()) as { access_level: number; expires_at: string | null }) : null;
};

/** An owner of a group and its project, and six people who asked for one or the other. */
const sixRequests = async () => {
  const owner = await consoleUser('own');
  const group = await createGroup(owner);
  const project = await createProject(owner, { namespace_id: group.id });
  const askers: ConsoleUser[] = [];
  for (let i = 0; i < 6; i++) askers.push(await consoleUser(`ask${i}`));
  for (const [i, u] of askers.entries()) expect((await as(u).post(i % 2 ? `/projects/${project.id}/access_requests` : `/groups/${group.id}/access_requests`)).status).toBe(201);
  const selection = askers.map((u, i) => (i % 2 ? `project:${project.id}:${u.id}` : `group:${group.id}:${u.id}`));
  return { owner, group, project, askers, selection };
};

describe('answering many requests at once', () => {
  it('approves six requests in one POST with one level and expiry, and the header count follows', async () => {
    const { owner, group, project, askers, selection } = await sixRequests();
    const { browser, csrf } = await consoleSession(owner);
    const before = await (await browser.get('/explore')).text();
    expect(textOf(before)).toContain('6 waiting');
    expect(before).toContain('<a class="waiting" href="/#inbox"');
    const expiry = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const { res, html } = await submit(browser, BULK, { authenticity_token: csrf, decision: 'approve', access_level: '20', expires_at: expiry, requests: selection, return_to: '/' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const notice = noticeOf(html) ?? '';
    expect(notice).toMatch(/^Answered 6 of 6 selected requests\./);
    for (const [i, u] of askers.entries()) {
      expect(notice).toContain(`Approved @${u.username} as Reporter on ${i % 2 ? project.full_path : group.full_path} until ${expiry}.`);
      expect(await levelOf(i % 2 ? 'projects' : 'groups', i % 2 ? project.id : group.id, u.id)).toMatchObject({ access_level: 20, expires_at: expiry });
    }
    expect(rowsOf(html)).toEqual([]);
    expect(html).not.toContain('class="waiting"');
  });

  it('reports a mixed batch per request: approved, already answered, and refused in GitLab words, with no error', async () => {
    const { owner, group, project, askers, selection } = await sixRequests();
    // A Maintainer of the project answers its requests but may not make an Owner of it, and not the group's.
    const maintainer = await consoleUser('mnt');
    await as(owner).post(`/projects/${project.id}/members`, { user_id: maintainer.id, access_level: 40 });
    expect((await as(askers[3]).delete(`/projects/${project.id}/access_requests/${askers[3].id}`)).status).toBe(204);
    const { browser, csrf } = await consoleSession(maintainer);
    const { res, html } = await submit(browser, BULK, { authenticity_token: csrf, decision: 'approve', access_level: '30', requests: [selection[0], selection[1], selection[3]], return_to: '/' });
    expect(res.status).toBe(303);
    const notice = noticeOf(html) ?? '';
    expect(notice).toContain('Answered 1 of 3 selected requests.');
    expect(notice).toContain(`Approved @${askers[1].username} as Developer on ${project.full_path}.`);
    expect(notice).toContain('is no longer pending: someone may have answered it already.');
    expect(notice).toMatch(/You are not allowed to do that\.|Group Not Found/);
    expect(await levelOf('groups', group.id, askers[0].id)).toBeNull();
    const pending = (await (await as(owner).get(`/groups/${group.id}/access_requests`)).json()) as { id: number }[];
    expect(pending.map((r) => r.id)).toContain(askers[0].id);
  });

  it("denies the selected requests of a project's Access requests tab only after a confirmation page, and comes back to the tab", async () => {
    const { owner, project, askers, selection } = await sixRequests();
    const { browser, csrf } = await consoleSession(owner);
    const tab = tabOf('projects', project.full_path, 'access_requests');
    const boxes = [...(await (await browser.get(tab)).text()).matchAll(/<input type="checkbox" class="select" name="requests" value="([^"]+)" form="bulk-requests"/g)].map((m) => m[1]);
    expect(boxes).toEqual([selection[1], selection[3], selection[5]]);
    const chosen = [selection[1], selection[3]];
    const ask = await browser.post(BULK, { authenticity_token: csrf, decision: 'deny', requests: chosen, return_to: tab });
    expect(ask.status).toBe(200);
    const page = await ask.text();
    expect(textOf(page)).toContain('Deny 2 access requests?');
    expect(textOf(page)).toContain(`@${askers[1].username}'s request for ${project.full_path}`);
    expect((await (await as(owner).get(`/projects/${project.id}/access_requests`)).json()) as unknown[]).toHaveLength(3);
    const { res, html } = await submit(browser, BULK, { authenticity_token: csrf, decision: 'deny', confirmed: 'yes', requests: chosen, return_to: tab });
    expect(res.headers.get('location')).toBe(tab);
    expect(noticeOf(html)).toBe(
      `Answered 2 of 2 selected requests. Denied the request of @${askers[1].username} for ${project.full_path}. Denied the request of @${askers[3].username} for ${project.full_path}.`,
    );
    const left = (await (await as(owner).get(`/projects/${project.id}/access_requests`)).json()) as { id: number }[];
    expect(left.map((r) => r.id)).toEqual([askers[5].id]);
  });

  it('refuses a forged bulk form, an empty or oversized batch, and a past expiry, changing nothing', async () => {
    const { owner, group, askers, selection } = await sixRequests();
    const { browser, csrf } = await consoleSession(owner);
    const forged = await browser.post(BULK, { authenticity_token: 'not-the-token', decision: 'approve', requests: selection });
    expect(forged.status).toBe(403);
    const tooMany = Array.from({ length: 101 }, (_, i) => `group:${group.id}:${i + 1}`);
    expect(fieldErrorsOf((await submit(browser, BULK, { authenticity_token: csrf, decision: 'approve', requests: tooMany, return_to: '/' })).html)).toEqual([
      'Select at most 100 requests at once.',
    ]);
    expect(fieldErrorsOf((await submit(browser, BULK, { authenticity_token: csrf, decision: 'approve', return_to: '/' })).html)).toEqual(['Select at least one request.']);
    expect(
      fieldErrorsOf((await submit(browser, BULK, { authenticity_token: csrf, decision: 'approve', expires_at: '2001-01-01', requests: selection, return_to: '/' })).html),
    ).toEqual(['Expiry date cannot be a date in the past.']);
    expect(await levelOf('groups', group.id, askers[0].id)).toBeNull();
  });
});

describe("the dashboard's filter and sort", () => {
  it('filters by group or project, requester and age, and sorts, in one read of the inbox', async () => {
    const { owner, project, askers } = await sixRequests();
    const { browser } = await consoleSession(owner);
    const all = rowsOf(await (await browser.get('/')).text());
    expect(all).toHaveLength(6);
    const inProject = rowsOf(await (await browser.get(`/?source=${encodeURIComponent(project.full_path.toUpperCase())}`)).text());
    expect(inProject).toEqual([1, 3, 5].map((i) => `${askers[i].name} (@${askers[i].username}) for ${project.full_path}`));
    expect(rowsOf(await (await browser.get(`/?requester=${askers[2].username}`)).text())).toEqual([all[2]]);
    expect(rowsOf(await (await browser.get('/?sort=newest')).text())).toEqual([...all].reverse());
    expect(textOf(await (await browser.get('/?older_than=1')).text())).toContain('No pending request matches.');
    advance(2 * 86_400);
    expect(rowsOf(await (await browser.get('/?older_than=1&sort=requester')).text())).toEqual(
      [...all].sort((a, b) => a.split('@')[1].localeCompare(b.split('@')[1])),
    );
  });

  it("filters and sorts a project's Access requests tab in the object's one read", async () => {
    const { owner, project, askers } = await sixRequests();
    const { browser } = await consoleSession(owner);
    const tab = tabOf('projects', project.full_path, 'access_requests');
    const html = await (await browser.get(tab)).text();
    expect(html).toContain('<input type="hidden" name="tab" value="access_requests"/>');
    const row = (i: number) => `${askers[i].name} (@${askers[i].username})`;
    expect(rowsOf(await (await browser.get(`${tab}&sort=newest`)).text())).toEqual([row(5), row(3), row(1)]);
    const filtered = await (await browser.get(`${tab}&requester=${askers[3].username.toUpperCase()}`)).text();
    expect(rowsOf(filtered)).toEqual([row(3)]);
    expect(textOf(filtered)).toContain('Access requests (1)');
    expect(textOf(await (await browser.get(`${tab}&older_than=7`)).text())).toContain('No pending request matches.');
  });

  it('ticks every shown row with "Select all shown"', async () => {
    const { owner } = await sixRequests();
    const { browser } = await consoleSession(owner);
    const html = await (await browser.get('/?select=all')).text();
    expect([...html.matchAll(/<input type="checkbox" class="select" name="requests"[^>]*checked/g)]).toHaveLength(6);
    expect(html).toContain('Clear selection');
  });
});
