// The Webhooks and Audit log sections of a group's or project's page: the same services and
// policy as the hooks and audit events API (Owners of a group; Maintainers and Owners of a
// project), forms that work without script, errors beside their field, and the signing secret
// shown once.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createGroup, createProject, KIND_ROUTES, startWorker, tabOf, type KindRoute } from './support/namespaces';
import { consoleSession, consoleUser, fieldErrorsOf, noticeOf, submit, textOf, type ConsoleUser } from './support/console';
import { ADMIN, Browser } from './support/http';
import { Receiver, settle } from './support/receiver';

beforeAll(startWorker, 30_000);

interface ApiHook {
  id: number;
  url: string;
  name: string;
  member_events: boolean;
  access_request_events: boolean;
  enable_ssl_verification: boolean;
}

const hooksOf = async (kind: KindRoute, id: number) => (await (await as(ADMIN).get(`/${kind}/${id}/hooks`)).json()) as ApiHook[];

/** A group or project of `owner` (a project inside a group of theirs), public, with its page and form addresses. */
const source = async (kind: KindRoute, owner: ConsoleUser, body: Record<string, unknown> = {}) => {
  const group = await createGroup(owner, kind === 'groups' ? body : {});
  const made = kind === 'groups' ? group : await createProject(owner, { namespace_id: group.id, ...body });
  return {
    id: made.id,
    groupId: group.id,
    path: made.full_path,
    /** Its Webhooks tab. */
    page: tabOf(kind, made.full_path, 'hooks'),
    audit: tabOf(kind, made.full_path, 'audit_events'),
    actions: `/${kind}/${made.id}/-`,
  };
};

const HOOK_FORM = { url: 'https://hooks.example.com/knock', token: 'my-secret-token', name: 'Audit', member_events: 'true', access_request_events: 'true', enable_ssl_verification: 'true' };

describe.each(KIND_ROUTES)('the webhooks of a %s page', (kind) => {
  it('adds a webhook and shows its signing secret once; tests it; lists its deliveries and resends one', async () => {
    const [owner, requester] = [await consoleUser('own'), await consoleUser('req')];
    const s = await source(kind, owner);
    const rx = new Receiver();
    const { browser, csrf } = await consoleSession(owner);
    const before = await (await browser.get(s.page)).text();
    expect(textOf(before)).toContain('Webhooks (0)');
    expect(before).toContain(`<form method="post" action="${s.actions}/hooks" class="add-hook" aria-label="Add a webhook">`);

    const { res, html } = await submit(browser, `${s.actions}/hooks`, { authenticity_token: csrf, return_to: s.page, ...HOOK_FORM });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const secret = /id="signing-secret" readonly="" value="(whsec_[^"]+)"/.exec(html)?.[1];
    expect(secret).toBeDefined();
    const [hook] = await hooksOf(kind, s.id);
    expect(hook).toMatchObject({ url: HOOK_FORM.url, name: 'Audit', member_events: true, access_request_events: true, enable_ssl_verification: true });
    expect(html).not.toContain('my-secret-token');
    const hookPage = `${s.actions}/hooks/${hook.id}`;
    const again = await (await browser.get(hookPage)).text();
    expect(again).not.toContain('whsec_');
    expect(textOf(again)).toContain('Nothing has been sent to this webhook yet.');

    const tested = await submit(browser, `${hookPage}/test`, { authenticity_token: csrf, trigger: 'member_events', return_to: hookPage });
    expect(noticeOf(tested.html)).toBe('Sent a sample member event: the webhook answered with success.');
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0].headers['x-gitlab-token']).toBe('my-secret-token');

    expect((await as(requester).post(`/${kind}/${s.id}/access_requests`)).status).toBe(201);
    await settle(s.id, s.groupId);
    const log = await (await browser.get(hookPage)).text();
    expect(textOf(log)).toMatch(/Deliveries of the last seven days \(2\)/);
    const resend = [...log.matchAll(/action="([^"]+\/events\/(\d+)\/resend)"/g)];
    expect(resend).toHaveLength(2);
    const sent = rx.received.length;
    const resent = await submit(browser, resend[0][1], { authenticity_token: csrf, return_to: hookPage });
    expect(noticeOf(resent.html)).toBe(`Resent delivery ${resend[0][2]}: the webhook answered 200.`);
    expect(rx.received).toHaveLength(sent + 1);
    expect(textOf(resent.html)).toMatch(/Deliveries of the last seven days \(3\)/);
  });

  it('edits a webhook (an empty token keeps it) and deletes it after a confirmation', async () => {
    const owner = await consoleUser('own');
    const s = await source(kind, owner);
    const { browser, csrf } = await consoleSession(owner);
    await submit(browser, `${s.actions}/hooks`, { authenticity_token: csrf, ...HOOK_FORM });
    const [hook] = await hooksOf(kind, s.id);
    const hookPage = `${s.actions}/hooks/${hook.id}`;
    const edited = await submit(browser, hookPage, { authenticity_token: csrf, return_to: hookPage, url: HOOK_FORM.url, token: '', name: 'Renamed', access_request_events: 'true' });
    expect(noticeOf(edited.html)).toBe(`Saved the webhook ${HOOK_FORM.url}.`);
    expect((await hooksOf(kind, s.id))[0]).toMatchObject({ name: 'Renamed', member_events: false, access_request_events: true, enable_ssl_verification: false });
    const rx = new Receiver();
    await submit(browser, `${hookPage}/test`, { authenticity_token: csrf, trigger: 'access_request_events' });
    expect(rx.received[0]?.headers['x-gitlab-token']).toBe('my-secret-token');

    const confirm = await browser.get(`${hookPage}/delete`);
    expect(confirm.status).toBe(200);
    expect(textOf(await confirm.text())).toContain(`Knock stops sending the events of ${s.path} to ${HOOK_FORM.url} ,`);
    expect(await hooksOf(kind, s.id)).toHaveLength(1);
    const deleted = await submit(browser, `${hookPage}/delete`, { authenticity_token: csrf, return_to: s.page });
    expect(noticeOf(deleted.html)).toBe(`Deleted the webhook of ${s.path}.`);
    expect(await hooksOf(kind, s.id)).toEqual([]);
    expect(textOf(deleted.html)).toContain('Webhooks (0)');
  });

  it("shows a blocked URL beside the URL field in GitLab's words, with what was typed, and adds nothing", async () => {
    const owner = await consoleUser('own');
    const s = await source(kind, owner);
    const { browser, csrf } = await consoleSession(owner);
    const { res, html } = await submit(browser, `${s.actions}/hooks`, { authenticity_token: csrf, ...HOOK_FORM, url: 'http://127.0.0.1:9000/hook', name: 'Local' });
    expect(res.status).toBe(303);
    expect(fieldErrorsOf(html)).toEqual(['Url is blocked: Requests to loopback addresses are not allowed.']);
    expect(html).toMatch(/id="add-hook-url" name="url" required="" autocomplete="off" value="http:\/\/127.0.0.1:9000\/hook" aria-invalid="true" aria-describedby="add-hook-url-error"/);
    expect(html).toContain('id="add-hook-url-error" role="alert"');
    expect(html).not.toContain('my-secret-token');
    expect(await hooksOf(kind, s.id)).toEqual([]);

    const bad = await submit(browser, `${s.actions}/hooks`, { authenticity_token: csrf, url: 'not a url' });
    expect(fieldErrorsOf(bad.html)).toEqual(['URL is invalid.']);
    const failed = await submit(browser, `${s.actions}/hooks`, { authenticity_token: csrf, ...HOOK_FORM });
    expect(failed.res.status).toBe(201);
    const [hook] = await hooksOf(kind, s.id);
    const rx = new Receiver();
    rx.respond = () => new Response('nope', { status: 500 });
    const tested = await submit(browser, `${s.actions}/hooks/${hook.id}/test`, { authenticity_token: csrf, trigger: 'member_events', return_to: s.page });
    expect(fieldErrorsOf(tested.html)).toEqual(['Hook execution failed: HTTP 500.']);
  });

  it('shows neither section to a Developer or a visitor, and refuses their forms with nothing changed', async () => {
    const [owner, dev, visitor] = [await consoleUser('own'), await consoleUser('dev'), await consoleUser('vis')];
    const s = await source(kind, owner, { visibility: 'public' });
    expect((await as(owner).post(`/${kind}/${s.id}/members`, { user_id: dev.id, access_level: 30 })).status).toBe(201);
    const created = (await (await as(owner).post(`/${kind}/${s.id}/hooks`, { url: HOOK_FORM.url })).json()) as ApiHook;
    const hookPage = `${s.actions}/hooks/${created.id}`;
    const rx = new Receiver();
    const forms: [string, Record<string, string>][] = [
      [`${s.actions}/hooks`, { ...HOOK_FORM, url: 'https://evil.example.com/' }],
      [hookPage, { ...HOOK_FORM, url: 'https://evil.example.com/' }],
      [`${hookPage}/test`, { trigger: 'member_events' }],
      [`${hookPage}/events/1/resend`, {}],
      [`${hookPage}/delete`, {}],
    ];
    for (const who of [dev, visitor]) {
      const { browser, csrf } = await consoleSession(who);
      const page = await (await browser.get(s.page)).text();
      expect(page, who.username).not.toContain('id="webhooks"');
      expect(page, who.username).not.toContain('id="audit-log"');
      expect(page, who.username).not.toContain(`${s.actions}/hooks`);
      for (const path of [hookPage, `${hookPage}/delete`]) expect((await browser.get(path)).status, `${who.username} GET ${path}`).toBe(403);
      for (const [action, fields] of forms) {
        const res = await browser.post(action, { authenticity_token: csrf, ...fields });
        expect(res.status, `${who.username} ${action}`).toBe(403);
        expect(textOf(await res.text()), `${who.username} ${action}`).toContain('You are not allowed to do that.');
      }
    }
    expect((await hooksOf(kind, s.id)).map((h) => h.url)).toEqual([HOOK_FORM.url]);
    expect(rx.received).toEqual([]);

    // Signed out: to the sign-in page, nothing changed.
    for (const [action, fields] of forms) {
      const res = await new Browser().post(action, fields);
      expect(res.status, action).toBe(303);
      expect(res.headers.get('location'), action).toBe('/users/sign_in');
    }
    expect((await hooksOf(kind, s.id)).map((h) => h.url)).toEqual([HOOK_FORM.url]);
    expect(rx.received).toEqual([]);
  });

  it('answers 404 for the webhook pages of a private one the viewer cannot see', async () => {
    const owner = await consoleUser('own');
    const s = await source(kind, owner, { visibility: 'private' });
    const created = (await (await as(owner).post(`/${kind}/${s.id}/hooks`, { url: HOOK_FORM.url })).json()) as ApiHook;
    const { browser, csrf } = await consoleSession(await consoleUser('vis'));
    expect((await browser.get(`${s.actions}/hooks/${created.id}`)).status).toBe(404);
    expect((await browser.post(`${s.actions}/hooks/${created.id}/delete`, { authenticity_token: csrf })).status).toBe(404);
    expect(await hooksOf(kind, s.id)).toHaveLength(1);
  });
});

describe('the audit log of a page', () => {
  it("lists a project's events newest first with author, action and target, and its group's log includes them", async () => {
    const [owner, bob] = [await consoleUser('own'), await consoleUser('bob')];
    const s = await source('projects', owner);
    expect((await as(bob).post(`/projects/${s.id}/access_requests`)).status).toBe(201);
    expect((await as(owner).put(`/projects/${s.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    await settle(s.id, s.groupId);
    const { browser } = await consoleSession(owner);
    const html = await (await browser.get(s.audit)).text();
    const section = /<section class="card" id="audit-log"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
    const rows = [...section.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map((m) => textOf(m[1]).replace(/^just now /, ''));
    expect(rows).toEqual([
      `${owner.name} Added as Developer (access_request_approved) ${bob.name}`,
      `${bob.name} Requested access (access_request_created) ${bob.name}`,
      `${owner.name} Added as Owner (member_created) ${owner.name}`,
    ]);
    expect(textOf(section)).toContain('Audit log (3)');

    const group = await (await browser.get(tabOf('groups', s.path.split('/')[0]!, 'audit_events'))).text();
    const groupLog = /<section class="card" id="audit-log"[\s\S]*?<\/section>/.exec(group)?.[0] ?? '';
    expect(textOf(groupLog)).toContain(`${owner.name} Added as Developer (access_request_approved) ${bob.name} in ${s.path}`);
  });
});
