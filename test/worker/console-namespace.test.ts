// The group and project pages of the web console: what each viewer sees, and that every form is
// checked by the same rules as the API (the policy and the services), whatever the page showed.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createGroup, createProject, KIND_ROUTES, pageOf, startWorker, tabOf, type KindRoute } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf, type ConsoleUser } from './support/console';
import { ADMIN } from './support/http';

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const nextMonth = () => new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);

/** A group or project of `owner` with `requester` waiting for access. */
const sourceWithRequest = async (kind: KindRoute, owner: ConsoleUser, requester: ConsoleUser, body: Record<string, unknown> = {}) => {
  const group = await createGroup(owner, kind === 'groups' ? body : {});
  const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id, ...body });
  expect((await as(requester).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
  return {
    id: source.id,
    path: source.full_path,
    /** Its Access requests tab. */
    page: tabOf(kind, source.full_path, 'access_requests'),
    settings: tabOf(kind, source.full_path, 'settings'),
    actions: `/${kind}/${source.id}/-`,
  };
};

const pendingUsernames = async (kind: KindRoute, id: number) =>
  ((await (await as(ADMIN).get(`/${kind}/${id}/access_requests`)).json()) as { username: string }[]).map((r) => r.username);

const memberOf = async (kind: KindRoute, id: number, userId: number) => {
  const res = await as(ADMIN).get(`/${kind}/${id}/members/${userId}`);
  return res.status === 200 ? ((await res.json()) as { access_level: number; expires_at: string | null }) : null;
};

beforeAll(startWorker, 30_000);

describe.each(KIND_ROUTES)('the %s page', (kind) => {
  it('lets the owner approve with a level and an expiry, and shows the new member', async () => {
    const [owner, requester] = [await consoleUser('own'), await consoleUser('req')];
    const source = await sourceWithRequest(kind, owner, requester);
    const { browser, csrf } = await consoleSession(owner);
    const page = await (await browser.get(source.page)).text();
    expect(page).toContain(`aria-label="Approve @${requester.username}"`);
    expect(page).toContain(`href="${source.actions}/access_requests/${requester.id}/deny?`);

    const expiry = nextMonth();
    const { res, html } = await submit(browser, `${source.actions}/access_requests/${requester.id}/approve`, {
      authenticity_token: csrf,
      access_level: '20',
      expires_at: expiry,
      return_to: source.page,
    });
    expect(res.headers.get('location')).toBe(source.page);
    expect(noticeOf(html)).toBe(`Approved @${requester.username} as Reporter on ${source.path} until ${expiry}.`);
    expect(await memberOf(kind, source.id, requester.id)).toMatchObject({ access_level: 20, expires_at: expiry });
    expect(textOf(html)).toContain(`@${requester.username}`);
    expect(await pendingUsernames(kind, source.id)).toEqual([]);
    // The notice is shown once.
    expect(noticeOf(await (await browser.get(source.page)).text())).toBeNull();
  });

  it('shows a bad expiry beside the field, and the request stays pending', async () => {
    const [owner, requester] = [await consoleUser('own'), await consoleUser('req')];
    const source = await sourceWithRequest(kind, owner, requester);
    const { browser, csrf } = await consoleSession(owner);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    for (const [expires_at, message] of [
      [yesterday, 'Expiry date cannot be a date in the past.'],
      ['2027-02-30', 'Expiry date is invalid.'],
    ]) {
      const { res, html } = await submit(browser, `${source.actions}/access_requests/${requester.id}/approve`, { authenticity_token: csrf, access_level: '30', expires_at });
      expect(res.status).toBe(303);
      expect(fieldErrorsOf(html)).toEqual([message]);
      expect(html).toMatch(/aria-invalid="true" aria-describedby="[a-z0-9-]+-expires-error"/);
      expect(html).toContain(`value="${expires_at}"`);
    }
    expect(await pendingUsernames(kind, source.id)).toEqual([requester.username]);
  });

  it('shows what a request asked, approves it as asked by default, and denies with a reason the requester sees', async () => {
    const [owner, requester, other] = [await consoleUser('own'), await consoleUser('req'), await consoleUser('oth')];
    const source = await sourceWithRequest(kind, owner, requester);
    const end = `${nextMonth()}`;
    expect((await as(other).post(`/${kind}/${source.id}/access_requests`, { reason: 'to fix the release', access_level: 20, expires_at: end })).status).toBe(201);
    const { browser, csrf } = await consoleSession(owner);
    const text = textOf(await (await browser.get(source.page)).text());
    expect(text).toContain('to fix the release');
    expect(text).toContain('asks for Reporter');
    expect(text).toContain(`until ${end}`);
    // Approving with the level shown and a blank end grants what was asked.
    const { html } = await submit(browser, `${source.actions}/access_requests/${other.id}/approve`, { authenticity_token: csrf, access_level: '20', expires_at: '', return_to: source.page });
    expect(noticeOf(html)).toBe(`Approved @${other.username} as Reporter on ${source.path} until ${end}.`);
    expect(await memberOf(kind, source.id, other.id)).toMatchObject({ access_level: 20, expires_at: end });
    const confirm = await (await browser.get(`${source.actions}/access_requests/${requester.id}/deny`)).text();
    expect(confirm).toContain('name="reason"');
    await submit(browser, `${source.actions}/access_requests/${requester.id}/deny`, { authenticity_token: csrf, reason: 'not this quarter', return_to: source.page });
    const mine = (await (await as(requester).get('/user/access_requests')).json()) as { source_id: number; status: string; denial_reason: string | null }[];
    expect(mine.find((r) => r.source_id === source.id)).toMatchObject({ status: 'denied', denial_reason: 'not this quarter' });
  });

  it('edits the access request rules on the settings page, refuses bad ones beside the field, and inherits again', async () => {
    const [owner, requester] = [await consoleUser('own'), await consoleUser('req')];
    const source = await sourceWithRequest(kind, owner, requester);
    const { browser, csrf } = await consoleSession(owner);
    const settings = await (await browser.get(source.settings)).text();
    expect(settings).toContain('Access request rules');
    expect(settings).toContain('&quot;approvals_required&quot;: 1');
    const rules = JSON.stringify({ reason_required: true, approvals_required: 2 });
    const saved = await submit(browser, `${source.actions}/access_request_rules`, { authenticity_token: csrf, rules, action: 'save', return_to: source.settings });
    expect(noticeOf(saved.html)).toBe(`Saved the access request rules of ${source.path}.`);
    expect(await (await as(ADMIN).get(`/${kind}/${source.id}/access_request_rules`)).json()).toMatchObject({ reason_required: true, approvals_required: 2, inherited_from: null });
    for (const bad of ['{not json', JSON.stringify({ approvals_required: 9 })]) {
      const refused = await submit(browser, `${source.actions}/access_request_rules`, { authenticity_token: csrf, rules: bad, action: 'save', return_to: source.settings });
      expect(refused.res.status).toBe(303);
      expect(textOf(refused.html)).toMatch(/Rules is not valid JSON\.|Approvals_required is invalid\./);
    }
    const inherited = await submit(browser, `${source.actions}/access_request_rules`, { authenticity_token: csrf, action: 'inherit', return_to: source.settings });
    expect(noticeOf(inherited.html)).toBe('No rules apply now.');
    expect(await (await as(ADMIN).get(`/${kind}/${source.id}/access_request_rules`)).json()).toMatchObject({ reason_required: false, approvals_required: 1 });
  });

  it('denies after a confirmation page', async () => {
    const [owner, requester] = [await consoleUser('own'), await consoleUser('req')];
    const source = await sourceWithRequest(kind, owner, requester);
    const { browser, csrf } = await consoleSession(owner);
    const confirm = await browser.get(`${source.actions}/access_requests/${requester.id}/deny?return_to=${encodeURIComponent(source.page)}`);
    const html = await confirm.text();
    expect(confirm.status).toBe(200);
    expect(textOf(html)).toContain(`${requester.name} (@${requester.username}) asked for access to ${source.path}`);
    expect(await pendingUsernames(kind, source.id)).toEqual([requester.username]);
    const done = await submit(browser, `${source.actions}/access_requests/${requester.id}/deny`, { authenticity_token: csrf, return_to: source.page });
    expect(noticeOf(done.html)).toBe(`Denied the request of @${requester.username} for ${source.path}.`);
    expect(await pendingUsernames(kind, source.id)).toEqual([]);
    // Answered already: said beside the form, not as an error page.
    const again = await submit(browser, `${source.actions}/access_requests/${requester.id}/deny`, { authenticity_token: csrf, return_to: source.page });
    expect(again.res.status).toBe(303);
  });

  it('refuses approve, deny and the confirmation to a viewer who may not answer requests, and nothing changes', async () => {
    const [owner, requester, stranger] = [await consoleUser('own'), await consoleUser('req'), await consoleUser('str')];
    const source = await sourceWithRequest(kind, owner, requester);
    const { browser, csrf } = await consoleSession(stranger);
    const page = await (await browser.get(source.page)).text();
    expect(page).not.toContain('Approve');
    expect(page).not.toContain('Access requests (');
    expect(page).not.toContain('Add member');
    expect(page).not.toContain('Save settings');
    for (const [path, fields] of [
      [`${source.actions}/access_requests/${requester.id}/approve`, { access_level: '30' }],
      [`${source.actions}/access_requests/${requester.id}/deny`, {}],
    ] as const) {
      const res = await browser.post(path, { authenticity_token: csrf, ...fields });
      expect(res.status, path).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(textOf(await res.text())).toContain('You are not allowed to do that.');
    }
    expect((await browser.get(`${source.actions}/access_requests/${requester.id}/deny`)).status).toBe(403);
    expect(await pendingUsernames(kind, source.id)).toEqual([requester.username]);
  });

  it('hides a private one (404 page) from a stranger, for the page and its forms', async () => {
    const [owner, member, stranger] = [await consoleUser('own'), await consoleUser('mem'), await consoleUser('str')];
    const group = await createGroup(owner, { visibility: 'private' });
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id, visibility: 'private' });
    await as(owner).post(`/${kind}/${source.id}/members`, { user_id: member.id, access_level: 10 });
    const { browser, csrf } = await consoleSession(stranger);
    expect((await browser.get(pageOf(kind, source.full_path))).status).toBe(404);
    expect((await browser.get(`/${kind}/${source.id}`)).status).toBe(404);
    for (const [path, fields] of [
      [`/${kind}/${source.id}/-/access_requests`, {}],
      [`/${kind}/${source.id}/-/members/${member.id}/remove`, {}],
      [`/${kind}/${source.id}/-/settings`, { name: 'Seen' }],
    ] as const) {
      const res = await browser.post(path, { authenticity_token: csrf, ...fields });
      expect(res.status, path).toBe(404);
      expect(textOf(await res.text())).toContain(`${kind === 'groups' ? 'Group' : 'Project'} Not Found`);
    }
    expect(await memberOf(kind, source.id, member.id)).toMatchObject({ access_level: 10 });
  });

  it('lets a visitor request access and withdraw, with buttons only for what they may do', async () => {
    const [owner, visitor] = [await consoleUser('own'), await consoleUser('vis')];
    const group = await createGroup(owner);
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id });
    const page = pageOf(kind, source.full_path);
    const actions = `/${kind}/${source.id}/-`;
    const { browser, csrf } = await consoleSession(visitor);
    expect(await (await browser.get(page)).text()).toContain('>Request access</button>');

    const asked = await submit(browser, `${actions}/access_requests`, { authenticity_token: csrf, return_to: page });
    expect(noticeOf(asked.html)).toMatch(/^You asked for access to /);
    expect(asked.html).toContain('>Withdraw request</button>');
    expect(asked.html).not.toContain('>Request access</button>');
    expect(await pendingUsernames(kind, source.id)).toEqual([visitor.username]);

    // A second request is refused by the service, and said beside the form.
    const twice = await submit(browser, `${actions}/access_requests`, { authenticity_token: csrf, return_to: page });
    expect(fieldErrorsOf(twice.html)).toEqual(['User already exists in source.']);

    const withdrawn = await submit(browser, `${actions}/access_requests/withdraw`, { authenticity_token: csrf, return_to: page });
    expect(noticeOf(withdrawn.html)).toBe(`You withdrew your request for ${source.full_path}.`);
    expect(withdrawn.html).toContain('>Request access</button>');
    expect(await pendingUsernames(kind, source.id)).toEqual([]);
  });

  it('offers no request button when requests are off, and the service refuses one anyway', async () => {
    const [owner, visitor] = [await consoleUser('own'), await consoleUser('vis')];
    const group = await createGroup(owner, kind === 'groups' ? { request_access_enabled: false } : {});
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id, request_access_enabled: false });
    const { browser, csrf } = await consoleSession(visitor);
    const html = await (await browser.get(pageOf(kind, source.full_path))).text();
    expect(html).not.toContain('Request access</button>');
    expect(textOf(html)).toContain('does not take access requests');
    const res = await browser.post(`/${kind}/${source.id}/-/access_requests`, { authenticity_token: csrf });
    expect(res.status).toBe(403);
    expect(await pendingUsernames(kind, source.id)).toEqual([]);
  });

  it('manages members: add by username, change level and expiry, clear it, remove after a confirmation', async () => {
    const [owner, dev] = [await consoleUser('own'), await consoleUser('dev')];
    const group = await createGroup(owner);
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id });
    const page = tabOf(kind, source.full_path, 'members');
    const actions = `/${kind}/${source.id}/-`;
    const { browser, csrf } = await consoleSession(owner);

    const unknown = await submit(browser, `${actions}/members`, { authenticity_token: csrf, username: 'no-such-user-x', access_level: '30', expires_at: '' });
    expect(fieldErrorsOf(unknown.html)).toEqual(['No user has this username.']);
    expect(unknown.html).toContain('value="no-such-user-x"');

    const added = await submit(browser, `${actions}/members`, { authenticity_token: csrf, username: dev.username, access_level: '30', expires_at: '', return_to: page });
    expect(noticeOf(added.html)).toBe(`Added @${dev.username} to ${source.full_path} as Developer.`);
    expect(await memberOf(kind, source.id, dev.id)).toMatchObject({ access_level: 30, expires_at: null });

    const again = await submit(browser, `${actions}/members`, { authenticity_token: csrf, username: dev.username, access_level: '30', expires_at: '' });
    expect(fieldErrorsOf(again.html)).toEqual(['Member already exists.']);

    const expiry = tomorrow();
    const changed = await submit(browser, `${actions}/members/${dev.id}`, { authenticity_token: csrf, access_level: '40', expires_at: expiry });
    expect(noticeOf(changed.html)).toBe(`@${dev.username} is now Maintainer on ${source.full_path}, until ${expiry}.`);
    expect(await memberOf(kind, source.id, dev.id)).toMatchObject({ access_level: 40, expires_at: expiry });

    const cleared = await submit(browser, `${actions}/members/${dev.id}`, { authenticity_token: csrf, access_level: '40', expires_at: '' });
    expect(noticeOf(cleared.html)).toBe(`@${dev.username} is now Maintainer on ${source.full_path}, with no expiry.`);
    expect(await memberOf(kind, source.id, dev.id)).toMatchObject({ expires_at: null });

    const confirm = await browser.get(`${actions}/members/${dev.id}/remove`);
    expect(textOf(await confirm.text())).toContain(`${dev.name} (@${dev.username}) will lose the Maintainer access to ${source.full_path}`);
    const removed = await submit(browser, `${actions}/members/${dev.id}/remove`, { authenticity_token: csrf, return_to: page });
    expect(noticeOf(removed.html)).toBe(`Removed @${dev.username} from ${source.full_path}.`);
    expect(await memberOf(kind, source.id, dev.id)).toBeNull();
  });

  it('refuses member changes to a member without the right, and keeps the member', async () => {
    const [owner, dev, stranger] = [await consoleUser('own'), await consoleUser('dev'), await consoleUser('str')];
    const group = await createGroup(owner);
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id });
    const actions = `/${kind}/${source.id}/-`;
    await as(owner).post(`/${kind}/${source.id}/members`, { user_id: dev.id, access_level: 30 });
    const { browser, csrf } = await consoleSession(dev);
    const html = await (await browser.get(tabOf(kind, source.full_path, 'members'))).text();
    expect(html).not.toContain(`aria-label="Save @${owner.username}"`);
    expect(html).not.toContain(`aria-label="Remove @${owner.username}"`);
    expect(html).toContain(`aria-label="Leave @${dev.username}"`);
    for (const [path, fields] of [
      [`${actions}/members`, { username: stranger.username, access_level: '30' }],
      [`${actions}/members/${owner.id}`, { access_level: '10', expires_at: '' }],
      [`${actions}/members/${owner.id}/remove`, {}],
    ] as const) {
      expect((await browser.post(path, { authenticity_token: csrf, ...fields })).status, path).toBe(403);
    }
    expect((await browser.get(`${actions}/members/${owner.id}/remove`)).status).toBe(403);
    expect(await memberOf(kind, source.id, owner.id)).toMatchObject({ access_level: 50 });
    expect(await memberOf(kind, source.id, stranger.id)).toBeNull();
  });

  it('changes settings for an owner; refuses a stranger', async () => {
    const [owner, stranger] = [await consoleUser('own'), await consoleUser('str')];
    const group = await createGroup(owner);
    const source = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id });
    const actions = `/${kind}/${source.id}/-`;
    const { browser, csrf } = await consoleSession(owner);
    const saved = await submit(browser, `${actions}/settings`, { authenticity_token: csrf, name: 'Renamed', visibility: 'internal' });
    expect(noticeOf(saved.html)).toBe(`Saved the settings of ${source.full_path}.`);
    const row = (await (await as(owner).get(`/${kind}/${source.id}`)).json()) as { name: string; visibility: string; request_access_enabled: boolean };
    expect(row).toMatchObject({ name: 'Renamed', visibility: 'internal', request_access_enabled: false });

    const empty = await submit(browser, `${actions}/settings`, { authenticity_token: csrf, name: '  ', request_access_enabled: 'true' });
    expect(fieldErrorsOf(empty.html)).toEqual(['Name is invalid.']);

    const other = await consoleSession(stranger);
    expect((await other.browser.post(`${actions}/settings`, { authenticity_token: other.csrf, name: 'Hijacked', request_access_enabled: 'true' })).status).toBe(403);
    expect(((await (await as(owner).get(`/${kind}/${source.id}`)).json()) as { name: string }).name).toBe('Renamed');
  });
});

describe('project pages for a Maintainer', () => {
  it('show settings without visibility, and refuse a visibility change and Owner-level changes', async () => {
    const [owner, maintainer, requester] = [await consoleUser('own'), await consoleUser('mnt'), await consoleUser('req')];
    const source = await sourceWithRequest('projects', owner, requester);
    await as(owner).post(`/projects/${source.id}/members`, { user_id: maintainer.id, access_level: 40 });
    const { browser, csrf } = await consoleSession(maintainer);
    const html = await (await browser.get(source.settings)).text();
    expect(html).toContain('Save settings');
    expect(html).not.toContain('name="visibility"');
    expect(html).not.toContain('<option value="50"');
    expect(html).not.toContain(`aria-label="Save @${owner.username}"`);

    expect((await browser.post(`${source.actions}/settings`, { authenticity_token: csrf, name: 'X', visibility: 'private', request_access_enabled: 'true' })).status).toBe(403);
    expect((await browser.post(`${source.actions}/access_requests/${requester.id}/approve`, { authenticity_token: csrf, access_level: '50' })).status).toBe(403);
    expect(await pendingUsernames('projects', source.id)).toEqual([requester.username]);
    const ok = await submit(browser, `${source.actions}/settings`, { authenticity_token: csrf, name: 'By maintainer' });
    expect(noticeOf(ok.html)).toMatch(/^Saved the settings/);
  });
});

describe('addresses', () => {
  it('finds subgroups and projects by full path (with slashes) and by id, which redirects to the path', async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    const { browser } = await consoleSession(owner);
    for (const [path, title] of [
      [`/groups/${sub.full_path}`, sub.full_path],
      [`/${project.full_path}`, project.full_path],
      [`/${project.full_path.toUpperCase()}`, project.full_path],
    ]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain(`<title>${title} · Knock</title>`);
    }
    const byId = await browser.get(`/projects/${project.id}?members_page=1`);
    expect(byId.status).toBe(302);
    expect(byId.headers.get('location')).toBe(`/${project.full_path}?members_page=1`);
    expect((await browser.get(`/groups/${project.full_path}`)).status).toBe(404);
    expect((await browser.get('/projects/no/such/thing')).status).toBe(404);
  });

  it("split a page into tabs at GitLab's addresses, offering each viewer only the tabs the policy lets them see", async () => {
    const [owner, stranger] = [await consoleUser('own'), await consoleUser('str')];
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const tabs = (html: string) => [...(/<nav class="tabs"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? '').matchAll(/<a href="([^"]+)"( aria-current="page")?>([^<]+)<\/a>/g)].map((m) => [m[3], m[1].replace(/&amp;/g, '&'), Boolean(m[2])]);
    const p = `/${project.full_path}`;
    const expected = [
      ['Overview', p],
      ['Members', `${p}/-/project_members`],
      ['Access requests', `${p}/-/project_members?tab=access_requests`],
      ['Settings', `${p}/edit`],
      ['Webhooks', `${p}/-/hooks`],
      ['Audit events', `${p}/-/audit_events`],
    ];
    const { browser } = await consoleSession(owner);
    for (const [label, path] of expected) {
      const res = await browser.get(path!);
      expect(res.status, path).toBe(200);
      // Every tab lists them all, and marks itself as the current page.
      expect(tabs(await res.text()), path).toEqual(expected.map(([l, href]) => [l, href, l === label]));
    }
    const groupSettings = await browser.get(`/groups/${group.full_path}/-/edit`);
    expect(groupSettings.status).toBe(200);
    expect(await groupSettings.text()).toContain('Save settings');
    const old = await browser.get(`/projects/${project.full_path}/edit`);
    expect([old.status, old.headers.get('location')]).toEqual([301, `${p}/edit`]);

    const other = await consoleSession(stranger);
    expect(tabs(await (await other.browser.get(p)).text()).map(([label]) => label)).toEqual(['Overview', 'Members']);
    for (const path of [`${p}/edit`, `${p}/-/hooks`, `${p}/-/audit_events`, `${p}/-/project_members?tab=access_requests`]) {
      expect((await other.browser.get(path)).status, path).toBe(404);
    }
  });

  it('list the members inherited from the groups above, with the group each comes from', async () => {
    const [owner, dev] = [await consoleUser('own'), await consoleUser('dev')];
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    await as(owner).post(`/groups/${group.id}/members`, { user_id: dev.id, access_level: 20 });
    const { browser } = await consoleSession(dev);
    const html = await (await browser.get(tabOf('projects', project.full_path, 'members'))).text();
    const section = /<section class="card" id="inherited-members"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
    const rows = [...section.matchAll(/<tr aria-label="([^"]+)">/g)].map((m) => m[1]);
    expect(rows).toEqual([
      `${owner.name} (@${owner.username}), inherited from ${sub.full_path}`,
      `${owner.name} (@${owner.username}), inherited from ${group.full_path}`,
      `${dev.name} (@${dev.username}), inherited from ${group.full_path}`,
    ]);
    expect(textOf(section)).toContain(`${dev.name} @${dev.username} Reporter Inherited from ${group.full_path}`);
    expect(section).toContain(`href="/groups/${group.full_path}/-/group_members"`);
    // A top-level group has nothing above it.
    expect(await (await browser.get(tabOf('groups', group.full_path, 'members'))).text()).not.toContain('id="inherited-members"');
  });

  it('send a signed-out visitor to sign in, and back', async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const { Browser } = await import('./support/http');
    const res = await new Browser().get(`/groups/${group.full_path}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/users/sign_in?return_to=${encodeURIComponent(`/groups/${group.full_path}`)}`);
  });

  it('paginates long member lists', async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const { quickUser } = await import('./support/world');
    for (let i = 0; i < 21; i++) {
      const u = await quickUser('m');
      await as(owner).post(`/groups/${group.id}/members`, { user_id: u.id, access_level: 10 });
    }
    const { browser } = await consoleSession(owner);
    const members = `/groups/${group.full_path}/-/group_members`;
    const first = await (await browser.get(members)).text();
    expect(textOf(first)).toContain('Members (22)');
    expect(textOf(first)).toContain('Page 1 of 2');
    expect(first).toContain(`href="${members}?members_page=2" rel="next"`);
    const second = await (await browser.get(`${members}?members_page=2`)).text();
    expect((second.match(/<tr aria-label=/g) ?? []).length).toBe(2);
  });
});

describe('member search', () => {
  it("finds members by username or name, in any case, on the Members tab and through GitLab's `query`", async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const [ann, ben] = [await consoleUser('ann'), await consoleUser('ben')];
    for (const u of [ann, ben]) await as(owner).post(`/groups/${group.id}/members`, { user_id: u.id, access_level: 30 });
    const api = async (q: string) => ((await (await as(owner).get(`/groups/${group.id}/members?query=${encodeURIComponent(q)}`)).json()) as { username: string }[]).map((m) => m.username);
    expect(await api(ann.username.toUpperCase())).toEqual([ann.username]);
    expect(await api(`user ${ben.username}`)).toEqual([ben.username]);
    expect((await api('')).sort()).toEqual([owner.username, ann.username, ben.username].sort());
    const { browser } = await consoleSession(owner);
    const members = `/groups/${group.full_path}/-/group_members`;
    const html = await (await browser.get(`${members}?search=${ben.username}`)).text();
    expect([...html.matchAll(/<tr aria-label="([^"]+)"/g)].map((m) => m[1])).toEqual([`${ben.name} (@${ben.username})`]);
    expect(textOf(html)).toContain('Members (1)');
    expect(textOf(await (await browser.get(`${members}?search=nobody-at-all`)).text())).toContain('No member matches “nobody-at-all”.');
  });
});
