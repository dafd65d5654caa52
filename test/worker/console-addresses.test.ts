// Every address a browser opens answers with a page: the `web_url` of each API shape (GitLab's
// `/acme/website`, `/groups/acme`, `/bob`), unknown addresses and error pages, each with the
// console's header and a way back. Clients that do not ask for HTML keep GitLab's JSON.
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createGroup, createProject, startWorker } from './support/namespaces';
import { consoleSession, consoleUser, textOf } from './support/console';
import { Browser, call } from './support/http';
import { authorizePath, registerApp } from './support/oauth';

beforeAll(startWorker, 30_000);

/** The path of an absolute `web_url`. */
const pathOf = (webUrl: string) => new URL(webUrl).pathname;

/** An HTML page with the signed-in header (the user and the navigation) and a way back. */
const expectPageWithHeader = async (res: Response, status: number, username: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
  expect(res.headers.get('X-Frame-Options')).toBe('DENY');
  const html = await res.text();
  expect(html).toContain('<nav aria-label="Main">');
  expect(html).toContain(`@${username}`);
  expect(html).toContain('<a href="/">Back to your dashboard</a>');
  return html;
};

describe('web_url of every API shape opens its console page', () => {
  it("a project's, a group's and a user's", async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const sub = await createGroup(owner, { parent_id: group.id });
    const project = await createProject(owner, { namespace_id: sub.id });
    const { browser } = await consoleSession(owner);

    const projectShape = (await (await as(owner).get(`/projects/${project.id}`)).json()) as { web_url: string; path_with_namespace: string };
    const projectPage = await browser.get(pathOf(projectShape.web_url));
    expect(projectPage.status).toBe(200);
    expect(await projectPage.text()).toContain(`<title>${projectShape.path_with_namespace} · Knock</title>`);

    const groupShape = (await (await as(owner).get(`/groups/${sub.id}`)).json()) as { web_url: string; full_path: string };
    const groupPage = await browser.get(pathOf(groupShape.web_url));
    expect(groupPage.status).toBe(200);
    expect(await groupPage.text()).toContain(`<title>${groupShape.full_path} · Knock</title>`);

    const userShape = (await (await as(owner).get('/user')).json()) as { web_url: string; name: string; username: string };
    const userPage = await browser.get(pathOf(userShape.web_url));
    expect(userPage.status).toBe(200);
    const text = textOf(await userPage.text());
    expect(text).toContain(userShape.name);
    expect(text).toContain(`@${userShape.username} Member since`);
  });

  it('keeps the /projects/ address, which leads to the project page, and sends a group path to /groups/', async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const { browser } = await consoleSession(owner);
    const old = await browser.get(`/projects/${project.full_path}?members_page=1`);
    expect(old.status).toBe(301);
    expect(old.headers.get('location')).toBe(`/${project.full_path}?members_page=1`);
    const byId = await browser.get(`/projects/${project.id}`);
    expect(byId.headers.get('location')).toBe(`/${project.full_path}`);
    const groupAtRoot = await browser.get(`/${group.full_path}`);
    expect(groupAtRoot.status).toBe(301);
    expect(groupAtRoot.headers.get('location')).toBe(`/groups/${group.full_path}`);
  });

  it('sends a signed-out visitor to sign in first, and back', async () => {
    const owner = await consoleUser('own');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    const res = await new Browser().get(`/${project.full_path}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/users/sign_in?return_to=${encodeURIComponent(`/${project.full_path}`)}`);
  });

  it('shows a private project to nobody else: the 404 page', async () => {
    const owner = await consoleUser('own');
    const stranger = await consoleUser('str');
    const group = await createGroup(owner, { visibility: 'private' });
    const project = await createProject(owner, { namespace_id: group.id, visibility: 'private' });
    const { browser } = await consoleSession(stranger);
    await expectPageWithHeader(await browser.get(`/${project.full_path}`), 404, stranger.username);
  });
});

describe('addresses where nothing is', () => {
  it('answer a signed-in browser with the 404 page, with the header and a way back', async () => {
    const viewer = await consoleUser('v');
    const { browser } = await consoleSession(viewer);
    for (const path of ['/help', '/nope', '/no/such/project', '/users/nope', '/-/nope', '/groups/no-such-group', '/admin/users']) {
      const html = await expectPageWithHeader(await browser.get(path), 404, viewer.username);
      expect(html, path).not.toContain('"error"');
    }
  });

  it('answer a signed-out browser with a page too: the 404 page, or sign-in first where a project or user may be', async () => {
    const res = await new Browser().get('/users/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('<a href="/users/sign_in">Go to the sign-in page</a>');
    const help = await new Browser().get('/help');
    expect(help.status).toBe(302);
    expect(help.headers.get('location')).toBe('/users/sign_in?return_to=%2Fhelp');
  });

  it('keep GitLab\'s JSON for a client that does not ask for HTML', async () => {
    for (const path of ['/nope', '/acme/website']) {
      const res = await call(path, { headers: { Accept: 'application/json' } });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toEqual({ error: '404 Not Found' });
    }
  });

  it('the OAuth "Invalid redirect URI" page has the header and a way back', async () => {
    const viewer = await consoleUser('v');
    const { browser } = await consoleSession(viewer);
    const app = await registerApp({ redirectUris: ['https://client.example/cb'] });
    const html = await expectPageWithHeader(await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: 'https://evil.example/cb', state: 's' })), 400, viewer.username);
    expect(textOf(html)).toContain('Invalid redirect URI');
  });
});
