// Users that change (GitLab's users API and user moderation API): PUT /users/:id, block, unblock,
// deactivate, activate and DELETE, and what each does to everything that copies a user: tokens
// of every kind, refresh tokens and codes, browser sessions, pending requests, memberships.
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Directory } from '../../worker/durable/directory/directory';
import { renameUserNamespace, snapshotOf } from '../../worker/durable/namespace-registry';
import { issueAccessToken, TOKEN_KINDS } from '../../worker/services/access-tokens';
import { expectError } from './support/contract';
import { indexedMembership, indexedPendingRequests } from './support/indexes';
import { Browser, call, issueToken, unique } from './support/http';
import { admin, as, createGroup, createProject, startWorker } from './support/namespaces';
import { authorizeCode, exchange, refresh, registerApp, signedIn, tokenCall, whoAmI, type App, type Tokens, type User } from './support/oauth';

vi.setConfig({ testTimeout: 60_000 });
beforeAll(startWorker, 30_000);

const REVOKED = { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' };
const INACTIVE_GRANT = { error: 'invalid_grant', error_description: 'The user of this authorization is no longer active.' };
const directory = () => env.DIRECTORY.getByName('directory');

/**
 * A signed-in user holding every kind of credential: an OAuth pair and a code not yet redeemed,
 * an impersonation token, a personal access token, a browser session and a pending access request.
 */
const holder = async (prefix: string) => {
  const { user, browser } = await signedIn(prefix);
  const app = await registerApp();
  const oauth = await exchange(app, (await authorizeCode(browser, app)).code);
  const { code } = await authorizeCode(browser, app);
  const impersonation = await issueToken(user.id, user.username, ['api']);
  const expiresAt = Math.floor(Date.now() / 1000) + 3600;
  const personal = (await issueAccessToken(env, user, TOKEN_KINDS.personal, { name: 'script', scopes: ['api'], expiresAt })).token;
  const owner = await makeOwner();
  const group = await createGroup(owner);
  expect((await call(`/api/v4/groups/${group.id}/access_requests`, { method: 'POST', headers: { 'PRIVATE-TOKEN': impersonation } })).status).toBe(201);
  return { user, browser, app, oauth, code, impersonation, personal, owner, group };
};
type Holder = Awaited<ReturnType<typeof holder>>;

const makeOwner = async () => {
  const username = unique('own');
  const created = await admin.post('/users', { username, name: `Owner ${username}`, password: 'correct horse battery' });
  const { id } = (await created.json()) as { id: number };
  return { id, username, name: `Owner ${username}`, headers: { 'PRIVATE-TOKEN': await issueToken(id, username, ['api']) } };
};

const tokensOf = (h: Holder): [string, Record<string, string>][] => [
  ['OAuth access token', { Authorization: `Bearer ${h.oauth.access_token}` }],
  ['impersonation token', { 'PRIVATE-TOKEN': h.impersonation }],
  ['personal access token', { 'PRIVATE-TOKEN': h.personal }],
];

const redeem = (app: App, code: string) => tokenCall({ client_id: app.clientId, client_secret: app.secret!, code });

const pendingIds = async (h: Holder) => {
  const res = await as(h.owner).get(`/groups/${h.group.id}/access_requests`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number }[]).map((r) => r.id);
};

/** Everything the user held has ended, from the very next request. */
const expectLockedOut = async (h: Holder, signIn: { status: number; message?: string }) => {
  for (const [kind, headers] of tokensOf(h)) {
    const res = await call('/api/v4/user', { headers });
    expect(res.status, kind).toBe(401);
    expect(await res.json(), kind).toEqual(REVOKED);
  }
  const refreshed = await refresh(h.app, h.oauth.refresh_token);
  expect(refreshed.status).toBe(400);
  expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
  const redeemed = await redeem(h.app, h.code);
  expect(redeemed.status).toBe(400);
  expect(((await redeemed.json()) as { error: string }).error).toBe('invalid_grant');
  const home = await h.browser.get('/');
  expect(home.status, 'the browser session ended').toBe(302);
  expect(home.headers.get('location')).toBe('/users/sign_in');
  const again = await new Browser().signIn(h.user);
  expect(again.status).toBe(signIn.status);
  if (signIn.message) expect(await again.text()).toContain(signIn.message);
  expect(await pendingIds(h)).not.toContain(h.user.id);
  expect(await indexedPendingRequests(h.user.id)).toEqual([]);
};

const userState = async (id: number) => ((await (await admin.get(`/users/${id}`)).json()) as { state: string }).state;

describe('POST /users/:id/block', () => {
  it('answers 201 true; every token, refresh token, code and session of the user ends at once; sign-in is refused with a reason', async () => {
    const h = await holder('blk');
    for (const [kind, headers] of tokensOf(h)) expect((await call('/api/v4/user', { headers })).status, kind).toBe(200);
    expect(await pendingIds(h)).toContain(h.user.id);

    const res = await admin.post(`/users/${h.user.id}/block`);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toBe(true);

    await expectLockedOut(h, { status: 403, message: 'Your account has been blocked' });
    expect(await userState(h.user.id)).toBe('blocked');
  });

  it('answers 201 null for a user already blocked; 404 for nobody; 403 for yourself, the built-in administrator and non-administrators', async () => {
    const h = await holder('blk2');
    expect(await (await admin.post(`/users/${h.user.id}/block`)).json()).toBe(true);
    const again = await admin.post(`/users/${h.user.id}/block`);
    expect(again.status).toBe(201);
    expect(await again.json()).toBeNull();
    await expectError(await admin.post('/users/99999999/block'), 404, { message: '404 User Not Found' });

    const root = ((await (await admin.get('/user')).json()) as { id: number }).id;
    await expectError(await admin.post(`/users/${root}/block`), 403, { message: '403 Forbidden - The API initiating user cannot be blocked by the API' });
    const otherAdmin = await makeAdmin();
    await expectError(await as(otherAdmin).post(`/users/${otherAdmin.id}/block`), 403, { message: '403 Forbidden - The API initiating user cannot be blocked by the API' });
    await expectError(await as(otherAdmin).post(`/users/${root}/block`), 403, { message: 'An internal user cannot be blocked' });
    await expectError(await as(h.owner).post(`/users/${otherAdmin.id}/block`), 403, { message: '403 Forbidden' });
    // Another administrator may be blocked, as in GitLab.
    expect(await (await admin.post(`/users/${otherAdmin.id}/block`)).json()).toBe(true);
    expect((await as(otherAdmin).get('/user')).status).toBe(401);
  });
});

const makeAdmin = async () => {
  const username = unique('adm');
  const created = await admin.post('/users', { username, name: `Admin ${username}`, password: 'correct horse battery', admin: true });
  const { id } = (await created.json()) as { id: number };
  return { id, username, headers: { 'PRIVATE-TOKEN': await issueToken(id, username, ['api']) } };
};

describe('POST /users/:id/unblock', () => {
  it('answers 201 true and lets the user sign in and get new tokens; the ended ones stay ended', async () => {
    const h = await holder('unb');
    expect((await admin.post(`/users/${h.user.id}/block`)).status).toBe(201);
    const res = await admin.post(`/users/${h.user.id}/unblock`);
    expect(res.status).toBe(201);
    expect(await res.json()).toBe(true);
    expect(await userState(h.user.id)).toBe('active');

    // Unlike GitLab, nothing the block ended comes back.
    for (const [kind, headers] of tokensOf(h)) expect((await call('/api/v4/user', { headers })).status, kind).toBe(401);
    expect((await refresh(h.app, h.oauth.refresh_token)).status).toBe(400);

    const browser = new Browser();
    expect((await browser.signIn(h.user)).status).toBe(303);
    const fresh = await exchange(h.app, (await authorizeCode(browser, h.app)).code);
    expect((await whoAmI(fresh.access_token)).status).toBe(200);
    expect((await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': await issueToken(h.user.id, h.user.username, ['api']) } })).status).toBe(200);
  });

  it('answers 201 false for an active user and 403 for a deactivated one', async () => {
    const h = await makeOwner();
    const active = await admin.post(`/users/${h.id}/unblock`);
    expect(active.status).toBe(201);
    expect(await active.json()).toBe(false);
    expect(await (await admin.post(`/users/${h.id}/deactivate`)).json()).toBe(true);
    await expectError(await admin.post(`/users/${h.id}/unblock`), 403, { message: '403 Forbidden - Deactivated users cannot be unblocked by the API' });
    await expectError(await admin.post('/users/99999999/unblock'), 404, { message: '404 User Not Found' });
  });
});

describe('POST /users/:id/deactivate and /activate', () => {
  it('deactivating ends everything the user holds, as a block does; activating lets them sign in again', async () => {
    const h = await holder('dea');
    const res = await admin.post(`/users/${h.user.id}/deactivate`);
    expect(res.status).toBe(201);
    expect(await res.json()).toBe(true);
    await expectLockedOut(h, { status: 403, message: 'Your account has been deactivated' });
    expect(await userState(h.user.id)).toBe('deactivated');

    const again = await admin.post(`/users/${h.user.id}/deactivate`);
    expect(again.status).toBe(201);
    expect(await again.json()).toBeNull();

    const activated = await admin.post(`/users/${h.user.id}/activate`);
    expect(activated.status).toBe(201);
    expect(await activated.json()).toBe(true);
    expect(await userState(h.user.id)).toBe('active');
    expect((await new Browser().signIn(h.user)).status).toBe(303);
    for (const [kind, headers] of tokensOf(h)) expect((await call('/api/v4/user', { headers })).status, kind).toBe(401);
  });

  it("follows GitLab's rules: a blocked user can be neither deactivated nor activated; activating an active user is false", async () => {
    const u = await makeOwner();
    const active = await admin.post(`/users/${u.id}/activate`);
    expect(active.status).toBe(201);
    expect(await active.json()).toBe(false);
    expect(await (await admin.post(`/users/${u.id}/block`)).json()).toBe(true);
    await expectError(await admin.post(`/users/${u.id}/deactivate`), 403, { message: 'Error occurred. A blocked user cannot be deactivated' });
    await expectError(await admin.post(`/users/${u.id}/activate`), 403, { message: '403 Forbidden - A blocked user must be unblocked to be activated' });
    // A deactivated user may be blocked (GitLab's state machine allows it).
    const d = await makeOwner();
    expect(await (await admin.post(`/users/${d.id}/deactivate`)).json()).toBe(true);
    expect(await (await admin.post(`/users/${d.id}/block`)).json()).toBe(true);
    expect(await userState(d.id)).toBe('blocked');

    const root = ((await (await admin.get('/user')).json()) as { id: number }).id;
    await expectError(await admin.post(`/users/${root}/deactivate`), 403, { message: 'Internal users cannot be deactivated' });
    await expectError(await admin.post('/users/99999999/activate'), 404, { message: '404 User Not Found' });
    await expectError(await as(u).post(`/users/${d.id}/activate`), 401);
  });
});

describe('DELETE /users/:id', () => {
  it('answers 204; the user, their tokens, session, memberships, pending requests and personal projects are gone', async () => {
    const h = await holder('del');
    const group = await createGroup(h.owner);
    expect((await as(h.owner).post(`/groups/${group.id}/members`, { user_id: h.user.id, access_level: 30 })).status).toBe(201);
    const personal = await createProject({ ...h.user, name: h.user.username, headers: { 'PRIVATE-TOKEN': h.impersonation } });

    const namespaceId = ((await (await admin.get(`/projects/${personal.id}`)).json()) as { namespace: { id: number } }).namespace.id;

    const res = await admin.delete(`/users/${h.user.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    await expectLockedOut(h, { status: 401, message: 'Invalid username or password.' });
    await expectError(await admin.get(`/users/${h.user.id}`), 404, { message: '404 User Not Found' });
    const members = (await (await as(h.owner).get(`/groups/${group.id}/members`)).json()) as { id: number }[];
    expect(members.map((m) => m.id)).not.toContain(h.user.id);
    expect(await indexedMembership(group.id, h.user.id)).toMatchObject({ access_level: 0 });
    await expectError(await admin.get(`/projects/${personal.id}`), 404, { message: '404 Project Not Found' });
    await expectError(await admin.get(`/projects/${encodeURIComponent(personal.full_path)}`), 404, { message: '404 Project Not Found' });
    // The personal namespace's copy left its index partition (its id's: it is its own tree's root).
    const copies = await runInDurableObject(env.INDEX_PARTITIONS.getByName(`index:${namespaceId % 64}`), (_i, state) =>
      state.storage.sql.exec('SELECT id FROM namespaces WHERE id = ?', namespaceId).toArray(),
    );
    expect(copies).toEqual([]);

    // The username is free again; the new user is someone else.
    const reborn = await admin.post('/users', { username: h.user.username, name: 'Someone else', password: 'correct horse battery' });
    expect(reborn.status).toBe(201);
    expect(((await reborn.json()) as { id: number }).id).not.toBe(h.user.id);
    await expectError(await admin.delete(`/users/${h.user.id}`), 404, { message: '404 User Not Found' });
  });

  it("refuses a group's only Owner (409) until another Owner is there, and the built-in administrator (403)", async () => {
    const owner = await makeOwner();
    const group = await createGroup(owner);
    await expectError(await admin.delete(`/users/${owner.id}`), 409, { message: 'User cannot be removed while is the sole-owner of a group' });
    await expectError(await admin.delete(`/users/${owner.id}?hard_delete=true`), 409);
    expect(await userState(owner.id)).toBe('active');
    const second = await makeOwner();
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: second.id, access_level: 50 })).status).toBe(201);
    expect((await admin.delete(`/users/${owner.id}`)).status).toBe(204);
    const members = (await (await as(second).get(`/groups/${group.id}/members`)).json()) as { id: number; access_level: number }[];
    expect(members.map((m) => [m.id, m.access_level])).toEqual([[second.id, 50]]);

    const root = ((await (await admin.get('/user')).json()) as { id: number }).id;
    await expectError(await admin.delete(`/users/${root}`), 403, { message: '403 Forbidden - The built-in administrator cannot be deleted' });
    await expectError(await as(second).delete(`/users/${second.id}`), 403, { message: '403 Forbidden' });
  });
});

describe('PUT /users/:id', () => {
  it('changes username, name, email and the administrator flag; answers the user with private fields', async () => {
    const u = await makeOwner();
    const username = unique('renamed');
    const res = await admin.put(`/users/${u.id}`, { username, name: 'New Name', email: `${username}@example.test`, admin: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: u.id, username, name: 'New Name', email: `${username}@example.test`, is_admin: true, state: 'active' });
    expect(await (await admin.get(`/users/${u.id}`)).json()).toMatchObject({ username, name: 'New Name', is_admin: true });
    // The existing token carries the new profile and the new rights on its very next use.
    expect(await (await as(u).get('/user')).json()).toMatchObject({ username, name: 'New Name', email: `${username}@example.test`, is_admin: true });
    expect((await as(u).get('/applications')).status).toBe(200);
    expect((await admin.put(`/users/${u.id}`, { admin: false })).status).toBe(200);
    await expectError(await as(u).get('/applications'), 403, { message: '403 Forbidden' });
  });

  it('shows a rename through every copy: OAuth and personal tokens, pending requests, members lists, the browser session', async () => {
    const h = await holder('ren');
    const group = await createGroup(h.owner);
    expect((await as(h.owner).post(`/groups/${group.id}/members`, { user_id: h.user.id, access_level: 20 })).status).toBe(201);
    const username = unique('after');
    expect((await admin.put(`/users/${h.user.id}`, { username, name: 'After Rename' })).status).toBe(200);

    for (const [kind, headers] of tokensOf(h)) {
      expect(await (await call('/api/v4/user', { headers })).json(), kind).toMatchObject({ id: h.user.id, username, name: 'After Rename' });
    }
    const pending = (await (await as(h.owner).get(`/groups/${h.group.id}/access_requests`)).json()) as { id: number; username: string; name: string }[];
    expect(pending.find((r) => r.id === h.user.id)).toMatchObject({ username, name: 'After Rename' });
    const members = (await (await as(h.owner).get(`/groups/${group.id}/members/all`)).json()) as { id: number; username: string }[];
    expect(members.find((m) => m.id === h.user.id)).toMatchObject({ username, name: 'After Rename' });
    expect(await (await h.browser.get('/')).text()).toContain('Hello, After Rename');
    // A refresh after the rename carries it too.
    const next = (await (await refresh(h.app, h.oauth.refresh_token)).json()) as Tokens;
    expect(await (await whoAmI(next.access_token)).json()).toMatchObject({ username, name: 'After Rename' });
  });

  it("moves the user's personal namespace with the username: its projects answer at the new path, the old one is 404", async () => {
    const u = await makeOwner();
    const project = await createProject(u);
    expect(project.full_path).toBe(`${u.username}/${project.path}`);
    const username = unique('moved');
    expect((await admin.put(`/users/${u.id}`, { username })).status).toBe(200);
    const moved = (await (await as(u).get(`/projects/${encodeURIComponent(`${username}/${project.path}`)}`)).json()) as { id: number; path_with_namespace: string };
    expect(moved).toMatchObject({ id: project.id, path_with_namespace: `${username}/${project.path}` });
    await expectError(await as(u).get(`/projects/${encodeURIComponent(project.full_path)}`), 404, { message: '404 Project Not Found' });
  });

  it('shows a rename of root through the admin token at once, and root stays the built-in administrator', async () => {
    const before = (await (await admin.get('/user')).json()) as { id: number; username: string; name: string };
    try {
      expect((await admin.put(`/users/${before.id}`, { username: 'chief', name: 'Chief Administrator' })).status).toBe(200);
      expect(await (await admin.get('/user')).json()).toMatchObject({ id: before.id, username: 'chief', name: 'Chief Administrator', is_admin: true });
      expect(await (await admin.get('/users?username=root')).json()).toEqual([]);
      await expectError(await admin.put(`/users/${before.id}`, { admin: false }), 403, { message: '403 Forbidden - The built-in administrator must stay an administrator' });
    } finally {
      expect((await admin.put(`/users/${before.id}`, { username: before.username, name: before.name })).status).toBe(200);
    }
    expect(await (await admin.get('/user')).json()).toMatchObject({ id: before.id, username: before.username });
  });

  it('a new password replaces the old one and ends the browser sessions', async () => {
    const { user, browser } = await signedIn('pw');
    expect((await admin.put(`/users/${user.id}`, { password: 'a brand new password' })).status).toBe(200);
    expect((await browser.get('/')).status).toBe(302);
    expect((await new Browser().signIn(user)).status).toBe(401);
    expect((await new Browser().signIn({ ...user, password: 'a brand new password' })).status).toBe(303);
  });

  it('refuses a taken username or email (409), bad input (400), unknown users (404) and non-administrators (403)', async () => {
    const [a, b] = await Promise.all([makeOwner(), makeOwner()]);
    await expectError(await admin.put(`/users/${a.id}`, { username: b.username.toUpperCase() }), 409, { message: 'Username has already been taken' });
    expect((await admin.put(`/users/${b.id}`, { email: `${b.username}@example.test` })).status).toBe(200);
    await expectError(await admin.put(`/users/${a.id}`, { email: `${b.username.toUpperCase()}@example.test` }), 409, { message: 'Email has already been taken' });
    const group = await createGroup(a);
    await expectError(await admin.put(`/users/${b.id}`, { username: group.full_path }), 409, { message: 'Username has already been taken' });
    await expectError(await admin.put(`/users/${b.id}`, { username: 'api' }), 409, { message: 'Username has already been taken' });
    // Changing only the case of one's own username is no conflict.
    expect((await admin.put(`/users/${b.id}`, { username: b.username.toUpperCase() })).status).toBe(200);
    await expectError(await admin.put(`/users/${a.id}`, { username: '-bad' }), 400, { error: 'username is invalid' });
    await expectError(await admin.put(`/users/${a.id}`, { email: 'not an email' }), 400, { error: 'email is invalid' });
    await expectError(await admin.put(`/users/${a.id}`, { password: 'short' }), 400, { error: 'password is invalid' });
    await expectError(await admin.put('/users/99999999', { name: 'Nobody' }), 404, { message: '404 User Not Found' });
    await expectError(await as(a).put(`/users/${a.id}`, { name: 'Self' }), 403, { message: '403 Forbidden' });
    expect(await (await admin.get(`/users/${a.id}`)).json()).toMatchObject({ username: a.username, name: a.name });
  });
});

describe('state in user-shaped responses', () => {
  it('says active, blocked or deactivated in the user, the user list, members and members/all', async () => {
    const owner = await makeOwner();
    const group = await createGroup(owner);
    const [blocked, deactivated, active] = await Promise.all([makeOwner(), makeOwner(), makeOwner()]);
    for (const u of [blocked, deactivated, active]) {
      expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: u.id, access_level: 30 })).status).toBe(201);
    }
    expect((await admin.post(`/users/${blocked.id}/block`)).status).toBe(201);
    expect((await admin.post(`/users/${deactivated.id}/deactivate`)).status).toBe(201);
    const want = new Map([
      [blocked.id, 'blocked'],
      [deactivated.id, 'deactivated'],
      [active.id, 'active'],
    ]);
    for (const [id, state] of want) {
      expect(await (await as(owner).get(`/users/${id}`)).json()).toMatchObject({ id, state, locked: false });
    }
    const byName = (await (await as(owner).get(`/users?username=${blocked.username}`)).json()) as { state: string }[];
    expect(byName.map((u) => u.state)).toEqual(['blocked']);
    for (const path of [`/groups/${group.id}/members`, `/groups/${group.id}/members/all`]) {
      const members = (await (await as(owner).get(path)).json()) as { id: number; state: string }[];
      for (const [id, state] of want) expect(members.find((m) => m.id === id)?.state, path).toBe(state);
    }
    // python-gitlab sends booleans as `True`; GitLab's parameter coercion takes any case.
    // Each filter asked about this test's users by name (the runtime may hold many others).
    const listed = async (filter: string, who: { username: string }) =>
      ((await (await admin.get(`/users?${filter}&username=${who.username}`)).json()) as { id: number; state: string }[]).map((u) => `${u.id} ${u.state}`);
    expect(await listed('blocked=True', blocked)).toEqual([`${blocked.id} blocked`]);
    expect(await listed('blocked=True', active)).toEqual([]);
    expect(await listed('blocked=True', deactivated)).toEqual([]);
    expect(await listed('active=true', active)).toEqual([`${active.id} active`]);
    expect(await listed('active=true', blocked)).toEqual([]);
    expect(await listed('active=true', deactivated)).toEqual([]);
  });
});

describe('a request made while its requester is being blocked', () => {
  it("is removed when its object pushes it to its tree's index partition, so no owner sees it afterwards", async () => {
    const owner = await makeOwner();
    const group = await createGroup(owner);
    const requester = await makeOwner();
    // The block commits, but the request reaches the group's object before anything tells it.
    await directory().changeUserState(requester.id, 'block', 0);
    const stub = env.NAMESPACES.getByName(String(group.id));
    const row = await directory().getNamespace('group', group.id);
    if (!row) throw new Error('group not in the registry');
    const made = await stub.requestAccess(
      { id: group.id, kind: 'group', creatorId: owner.id, createdAt: row.created_at, snapshot: snapshotOf(row), byPath: false },
      { userId: requester.id, admin: false, inherited: 0 },
      { username: requester.username, name: requester.name },
      { reason: null, accessLevel: null, expiresAt: null, breakGlass: false, email: null },
    );
    expect(made.ok).toBe(true);
    expect(await (await as(owner).get(`/groups/${group.id}/access_requests`)).json()).toEqual([]);
    expect(await indexedPendingRequests(requester.id)).toEqual([]);
  });
});

describe('refreshing and redeeming for a blocked user', () => {
  let app: App;
  let user: User;
  let pair: Tokens;
  beforeAll(async () => {
    const s = await signedIn('rfb');
    user = s.user;
    app = await registerApp();
    pair = await exchange(app, (await authorizeCode(s.browser, app)).code);
  });

  it('is refused with invalid_grant, saying the user is no longer active, from the call after the block', async () => {
    expect((await admin.post(`/users/${user.id}/block`)).status).toBe(201);
    const res = await refresh(app, pair.refresh_token);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(INACTIVE_GRANT);
  });
});

describe('a block whose fan-out never ran (the Worker went away right after the transaction)', () => {
  it("is finished by the Directory's alarm: tokens end, refreshes and codes are refused, the request is gone", async () => {
    const h = await holder('crash');
    const stub = directory();
    // Only the block's transaction: the users row, the sessions, the outbox row and its alarm.
    await runInDurableObject(stub, (instance: Directory) => {
      expect(instance['commitStateChange'](h.user.id, 'block', 0).ok).toBe(true);
    });
    expect(await userState(h.user.id)).toBe('blocked');
    const waiting = () =>
      runInDurableObject(stub, async (_i: Directory, state) => ({
        rows: state.storage.sql.exec('SELECT user_id FROM user_changes WHERE user_id = ?', h.user.id).toArray().length,
        alarm: await state.storage.getAlarm(),
      }));
    expect(await waiting()).toMatchObject({ rows: 1, alarm: expect.any(Number) });
    // Nothing beyond the row was reached yet (this is the state a crash would leave).
    expect((await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': h.impersonation } })).status).toBe(200);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await expectLockedOut(h, { status: 403, message: 'Your account has been blocked' });
    expect((await waiting()).rows).toBe(0);
  });
});

describe('a rename whose fan-out never ran (the Worker went away right after the transaction)', () => {
  it("is finished by the Directory's alarm: tokens, the pending request, members lists, the owners' inbox and sign-in show the new name", async () => {
    const h = await holder('crashren');
    const group = await createGroup(h.owner);
    expect((await as(h.owner).post(`/groups/${group.id}/members`, { user_id: h.user.id, access_level: 20 })).status).toBe(201);
    const username = unique('moved');
    const stub = directory();
    // Only the rename's transaction: the users row, the personal namespace, the outbox row and its alarm.
    await runInDurableObject(stub, (instance: Directory, state) => {
      state.storage.transactionSync(() => {
        const sql = instance['sql'];
        const { version } = sql.exec<{ version: number }>("UPDATE users SET username = ?, name = 'Moved Name', version = version + 1 WHERE id = ? RETURNING version", username, h.user.id).one();
        renameUserNamespace(sql, h.user.username, username, 'Moved Name');
        instance['queueFanOut'](h.user.id, version, false, [h.user.username]);
      });
    });
    expect(await (await call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': h.personal } })).json()).toMatchObject({ username: h.user.username });

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    for (const [kind, headers] of tokensOf(h)) {
      expect(await (await call('/api/v4/user', { headers })).json(), kind).toMatchObject({ id: h.user.id, username, name: 'Moved Name' });
    }
    const pending = (await (await as(h.owner).get(`/groups/${h.group.id}/access_requests`)).json()) as { id: number; username: string; name: string }[];
    expect(pending.find((r) => r.id === h.user.id)).toMatchObject({ username, name: 'Moved Name' });
    const members = (await (await as(h.owner).get(`/groups/${group.id}/members/all`)).json()) as { id: number; username: string; name: string }[];
    expect(members.find((m) => m.id === h.user.id)).toMatchObject({ username, name: 'Moved Name' });
    const inbox = (await (await as(h.owner).get('/access_requests')).json()) as { id: number; username: string; name: string }[];
    expect(inbox.find((r) => r.id === h.user.id)).toMatchObject({ username, name: 'Moved Name' });
    expect((await new Browser().signIn({ ...h.user, username })).status).toBe(303);
    expect((await new Browser().signIn(h.user)).status).toBe(401);
  });
});

describe('a user blocked while signing in or authorizing', () => {
  it('gets no session and no code: what was decided before the block cannot outlive it', async () => {
    const { user, browser } = await signedIn('mid');
    const app = await registerApp();
    await exchange(app, (await authorizeCode(browser, app)).code);
    const checked = await directory().getUser(user.id);
    if (!checked) throw new Error('no user');
    expect((await admin.post(`/users/${user.id}/block`)).status).toBe(201);
    // The password was checked (the row read as active), or the consent given, just before the block committed.
    const grants = env.USERS.getByName(String(user.id));
    expect(await grants.createSession(checked, `late-session-${user.id}`, 'csrf-token-of-a-late-session', 3600)).toBe(false);
    const code = await env.USERS.getByName(String(user.id)).issueCode({
      userId: user.id,
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      scopes: ['api'],
      codeChallenge: null,
      rememberConsent: true,
      nonce: null,
      authTime: null,
      sid: null,
    });
    expect(code).toEqual({ refused: 'inactive_user' });
    // Unblocking brings neither back.
    expect((await admin.post(`/users/${user.id}/unblock`)).status).toBe(201);
    expect(await grants.getSession(`late-session-${user.id}`)).toBeNull();
    expect(await env.USERS.getByName(String(user.id)).hasConsent(app.clientId, ['api'])).toBe(false);
  });
});
