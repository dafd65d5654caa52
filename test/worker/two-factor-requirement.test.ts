// A group's `require_two_factor_authentication`: its members, and the members of its subgroups,
// who have no second factor may only set one up in the console, and get no OAuth code; their
// personal access and impersonation tokens work as before (GitLab's enforcement is the web's).
import { beforeAll, describe, expect, it } from 'vitest';
import { fromBase32, hotp, totpStep } from '../../worker/auth/totp';
import { DEVELOPER } from '../../shared/access-levels';
import { consoleSession, textOf } from './support/console';
import { Browser, createUser, type TestUser } from './support/http';
import { addMember, admin, as, createGroup, startWorker } from './support/namespaces';
import { authorizePath, consentFields, registerApp } from './support/oauth';

beforeAll(startWorker, 30_000);

const PAGE = '/-/profile/two_factor_auth';
const personOf = (u: TestUser) => ({ id: u.id, username: u.username, name: `User ${u.username}`, headers: u.headers });

/** An owner's group that requires a second factor, with a subgroup, and `member` a Developer of the subgroup. */
const requiringGroup = async (member: TestUser) => {
  const owner = personOf(await createUser('owner'));
  const group = await createGroup(owner);
  const sub = await createGroup(owner, { parent_id: group.id });
  await addMember('groups', sub.id, personOf(member), DEVELOPER);
  const res = await as(owner).put(`/groups/${group.id}`, { require_two_factor_authentication: true });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { require_two_factor_authentication: boolean }).require_two_factor_authentication).toBe(true);
  return { owner, group, sub };
};

/** A browser signed in as `user` (whose console may be only the two-factor page), with its CSRF token. */
const signedIn = async (user: TestUser) => {
  const browser = new Browser();
  expect((await browser.signIn(user)).status).toBe(303);
  return { browser, csrf: Browser.csrf(await (await browser.get(PAGE)).text()) };
};

describe("a group's require_two_factor_authentication", () => {
  it('sends a member without a second factor to set one up, with GitLab\'s notice; their tokens still work', async () => {
    const bob = await createUser('bob');
    const { group, sub } = await requiringGroup(bob);
    const { browser, csrf } = await signedIn(bob);

    for (const path of ['/', '/-/profile', `/groups/${sub.full_path}`]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(PAGE);
    }
    // A form is refused the same way, and does nothing.
    const posted = await browser.post('/-/profile/personal_access_tokens', { authenticity_token: csrf, name: 'blocked', scopes: 'api' });
    expect(posted.headers.get('location')).toBe(PAGE);
    const page = await browser.get(PAGE);
    expect(page.status).toBe(200);
    expect(textOf(await page.text())).toContain(`The group settings for ${group.full_path} require you to enable Two-Factor Authentication for your account.`);

    // Personal access and impersonation tokens are not the web: they work as before.
    expect((await as(bob).get('/user')).status).toBe(200);
    expect((await as(bob).get(`/groups/${sub.id}`)).status).toBe(200);
    expect((await as(bob).get('/personal_access_tokens?search=blocked')).status).toBe(200);
    expect(await (await as(bob).get('/personal_access_tokens?search=blocked')).json()).toEqual([]);

    // Once bob has an authenticator app, the console is his again.
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(await (await browser.get(PAGE)).text())![1];
    const code = await hotp(fromBase32(secret)!, totpStep(Date.now()));
    expect((await browser.post(PAGE, { authenticity_token: csrf, pin_code: code })).status).toBe(201);
    expect((await browser.get('/')).status).toBe(200);
  });

  it('refuses an OAuth code to such a member', async () => {
    const dana = await createUser('dana');
    await requiringGroup(dana);
    const app = await registerApp();
    const { browser } = await signedIn(dana);
    const consent = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', scope: 'api', state: 's' }));
    expect(consent.status).toBe(200);
    const res = await browser.post('/login/oauth/authorize', { ...consentFields(await consent.text()), decision: 'authorize' });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
    expect(textOf(await res.text())).toContain('require you to enable Two-Factor Authentication');
  });

  it('leaves everyone alone once the group no longer requires it, and never touches non-members', async () => {
    const erin = await createUser('erin');
    const outsider = await createUser('outsider');
    const { owner, group } = await requiringGroup(erin);
    expect((await (await consoleSession(outsider)).browser.get('/')).status).toBe(200);
    const { browser } = await signedIn(erin);
    expect((await browser.get('/')).status).toBe(302);
    expect((await as(owner).put(`/groups/${group.id}`, { require_two_factor_authentication: false })).status).toBe(200);
    expect((await browser.get('/')).status).toBe(200);
  });

  it("is an instance setting too (PUT /application/settings), for everyone without a second factor", async () => {
    const frank = await createUser('frank');
    const { browser } = await signedIn(frank);
    expect((await browser.get('/')).status).toBe(200);
    expect((await as(frank).put('/application/settings', { require_two_factor_authentication: true })).status).toBe(403);
    try {
      const res = await admin.put('/application/settings', { require_two_factor_authentication: true });
      expect(await res.json()).toEqual({ require_two_factor_authentication: true });
      expect(await (await admin.get('/application/settings')).json()).toEqual({ require_two_factor_authentication: true });
      const home = await browser.get('/');
      expect(home.headers.get('location')).toBe(PAGE);
      expect(textOf(await (await browser.get(PAGE)).text())).toContain('The global settings require you to enable Two-Factor Authentication for your account.');
      expect((await as(frank).get('/user')).status).toBe(200);
    } finally {
      expect((await admin.put('/application/settings', { require_two_factor_authentication: false })).status).toBe(200);
    }
    expect((await browser.get('/')).status).toBe(200);
  });

  it("is an Owner's setting, given at creation or changed: a Developer cannot change it, a project has none", async () => {
    const dev = await createUser('dev');
    const owner = personOf(await createUser('owner'));
    const group = await createGroup(owner, { require_two_factor_authentication: true });
    expect(group.require_two_factor_authentication).toBe(true);
    await addMember('groups', group.id, personOf(dev), DEVELOPER);
    expect((await as(dev).put(`/groups/${group.id}`, { require_two_factor_authentication: false })).status).toBe(403);
    const project = await as(owner).post('/projects', { name: 'p', path: `p${group.id}`, namespace_id: group.id, require_two_factor_authentication: true });
    expect(await project.json()).not.toHaveProperty('require_two_factor_authentication');
  });
});
