// OpenID Connect at the token endpoint: the id_token of a code exchange and of a refresh, with
// GitLab's claims, and the claims as they are when the token is issued.
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { ORIGIN, createUser, unique } from './support/http';
import { consoleSession, consoleUser, textOf } from './support/console';
import { admin, as, createGroup, startWorker, type Person } from './support/namespaces';
import { Browser, authorizeCode, exchange, registerApp, whoAmI } from './support/oauth';
import { openidApp, refreshed, signInWithKnock, userinfoClaims, verifyIdToken, type OidcTokens } from './support/oidc';

beforeAll(startWorker, 30_000);

/** A user with a password (to sign in through the pages) and an API token. */
const newUser = async (prefix: string) => {
  const u = await createUser(prefix);
  const person: Person = { id: u.id, username: u.username, name: `User ${u.username}`, headers: u.headers };
  const browser = new Browser();
  expect((await browser.signIn(u)).status).toBe(303);
  return { ...u, person, browser };
};

const sha256Half = async (value: string) =>
  Buffer.from(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value))).slice(0, 16)).toString('base64url');

describe('the id_token of a code exchange (OpenID Connect Core 1.0 §3.1.3.3)', () => {
  it('carries GitLab claims, the nonce, auth_time, sid and at_hash, signed RS256 by a key of the JWKS', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const signedInAt = Math.floor(Date.now() / 1000);
    const tokens = await signInWithKnock(bob.browser, app, { nonce: 'n-0S6_WzA2Mj' });
    expect(tokens.scope).toBe('email openid profile');
    expect(tokens.id_token).toBeTypeOf('string');
    const { payload, kid } = await verifyIdToken(tokens.id_token!, app);
    expect(kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(payload).toMatchObject({
      iss: ORIGIN,
      aud: app.clientId,
      sub: String(bob.id),
      nonce: 'n-0S6_WzA2Mj',
      name: `User ${bob.username}`,
      nickname: bob.username,
      preferred_username: bob.username,
      profile: `${ORIGIN}/${bob.username}`,
      email: `${bob.username}@example.test`,
      email_verified: false,
      groups_direct: [],
      at_hash: await sha256Half(tokens.access_token),
    });
    expect(payload.exp! - payload.iat!).toBe(120);
    expect(payload.auth_time).toBeGreaterThanOrEqual(signedInAt - 5);
    expect(payload.auth_time).toBeLessThanOrEqual(payload.iat!);
    expect(payload.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Claims GitLab releases only from userinfo are not in the id_token.
    expect(payload).not.toHaveProperty('groups');
    expect(payload).not.toHaveProperty('https://gitlab.org/claims/groups/owner');
  });

  it('leaves out email without the email scope, and the nonce when none was sent', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const tokens = await signInWithKnock(bob.browser, app, { scope: 'openid' });
    const { payload } = await verifyIdToken(tokens.id_token!, app);
    expect(payload.preferred_username).toBe(bob.username);
    expect(payload).not.toHaveProperty('email');
    expect(payload).not.toHaveProperty('email_verified');
    expect(payload).not.toHaveProperty('nonce');
  });

  it('is not issued without the openid scope, and the openid scope alone does not open the API', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const plain = await exchange(app, (await authorizeCode(bob.browser, app, { scope: 'api' })).code);
    expect(plain).not.toHaveProperty('id_token');
    const openid = await signInWithKnock(bob.browser, app, { scope: 'openid' });
    const res = await whoAmI(openid.access_token);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
  });

  it('keeps the sid of the browser session: the same for two sign-ins in one session, another after signing in again', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const first = await verifyIdToken((await signInWithKnock(bob.browser, app)).id_token!, app);
    const second = await verifyIdToken((await signInWithKnock(bob.browser, app)).id_token!, app);
    expect(second.payload.sid).toBe(first.payload.sid);
    const other = new Browser();
    expect((await other.signIn(bob)).status).toBe(303);
    const third = await verifyIdToken((await signInWithKnock(other, app)).id_token!, app);
    expect(third.payload.sid).not.toBe(first.payload.sid);
  });
});

describe('the id_token of a refresh (OpenID Connect Core 1.0 §12.2)', () => {
  it('is issued again with the same sub, auth_time and sid, a new iat and at_hash, and no nonce', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const tokens = await signInWithKnock(bob.browser, app, { nonce: 'first-nonce' });
    const first = await verifyIdToken(tokens.id_token!, app);
    advance(3600);
    const again = await refreshed(app, tokens);
    const second = await verifyIdToken(again.id_token!, app);
    expect(second.payload).toMatchObject({ sub: first.payload.sub, auth_time: first.payload.auth_time, sid: first.payload.sid, aud: app.clientId });
    expect(second.payload.iat).toBeGreaterThanOrEqual(first.payload.iat! + 3600);
    expect(second.payload.at_hash).toBe(await sha256Half(again.access_token));
    expect(second.payload).not.toHaveProperty('nonce');
  });

  it('is not issued when the refresh narrows the scope to leave out openid', async () => {
    const app = await openidApp();
    const bob = await newUser('bob');
    const { code } = await authorizeCode(bob.browser, app, { scope: 'openid api' });
    const tokens = await exchange(app, code);
    const { refresh } = await import('./support/oauth');
    const res = await refresh(app, tokens.refresh_token, { scope: 'api' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as OidcTokens;
    expect(body.scope).toBe('api');
    expect(body).not.toHaveProperty('id_token');
  });
});

describe('group claims, read when the token is issued', () => {
  it('show an approval in the next sign-in, and lose a demotion, an expiry and a removal in the next one', async () => {
    const app = await openidApp();
    const alice = await newUser('alice');
    const bob = await newUser('bob');
    const acme = await createGroup(alice.person);
    const web = await createGroup(alice.person, { parent_id: acme.id });
    const other = await createGroup(alice.person);

    const groupsOf = async (tokens: OidcTokens) => ({
      id: (await verifyIdToken(tokens.id_token!, app)).payload,
      info: await userinfoClaims(tokens.access_token),
    });

    const before = await groupsOf(await signInWithKnock(bob.browser, app));
    expect(before.id.groups_direct).toEqual([]);
    expect(before.info.groups).toEqual([]);

    // bob asks for acme; alice approves him as Developer; bob is Owner of a group of his own.
    expect((await as(bob.person).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);
    expect((await as(alice.person).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    const own = await createGroup(bob.person);
    const approvedTokens = await signInWithKnock(bob.browser, app);
    const approved = await groupsOf(approvedTokens);
    expect(approved.id.groups_direct).toEqual([acme.full_path, own.full_path].sort());
    expect(approved.info).toMatchObject({
      sub: String(bob.id),
      groups: [acme.full_path, web.full_path, own.full_path].sort(),
      'https://gitlab.org/claims/groups/developer': [acme.full_path],
      'https://gitlab.org/claims/groups/owner': [own.full_path],
    });
    expect(approved.info).not.toHaveProperty('https://gitlab.org/claims/groups/maintainer');
    expect(approved.info).not.toHaveProperty('groups_direct');
    expect(approved.info.groups).not.toContain(other.full_path);

    // Demoted to Reporter: still a member, no longer a Developer.
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 20 })).status).toBe(200);
    const demoted = await groupsOf(await signInWithKnock(bob.browser, app));
    expect(demoted.id.groups_direct).toContain(acme.full_path);
    expect(demoted.info).not.toHaveProperty('https://gitlab.org/claims/groups/developer');
    // A token issued before says what it was issued with.
    expect(await userinfoClaims(approvedTokens.access_token)).toMatchObject({ 'https://gitlab.org/claims/groups/developer': [acme.full_path] });

    // Membership that expires tomorrow: gone once tomorrow has come.
    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000).toISOString().slice(0, 10);
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 40, expires_at: tomorrow })).status).toBe(200);
    const expiring = await groupsOf(await signInWithKnock(bob.browser, app));
    expect(expiring.info).toMatchObject({ 'https://gitlab.org/claims/groups/maintainer': [acme.full_path] });
    advance(2 * 24 * 3600);
    const expired = await groupsOf(await signInWithKnock(bob.browser, app));
    expect(expired.id.groups_direct).toEqual([own.full_path]);
    expect(expired.info.groups).toEqual([own.full_path]);

    // Approved again, then removed.
    expect((await as(bob.person).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);
    expect((await as(alice.person).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    expect((await verifyIdToken((await signInWithKnock(bob.browser, app)).id_token!, app)).payload.groups_direct).toContain(acme.full_path);
    expect((await as(alice.person).delete(`/groups/${acme.id}/members/${bob.id}`)).status).toBe(204);
    const removed = await groupsOf(await signInWithKnock(bob.browser, app));
    expect(removed.id.groups_direct).toEqual([own.full_path]);
    expect(removed.info.groups).toEqual([own.full_path]);
  });

  it('count a member of Guest and above, not Minimal access', async () => {
    const app = await openidApp();
    const alice = await newUser('alice');
    const bob = await newUser('bob');
    const acme = await createGroup(alice.person);
    expect((await as(bob.person).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);
    expect((await as(alice.person).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 5 })).status).toBe(201);
    const minimal = await signInWithKnock(bob.browser, app);
    expect((await verifyIdToken(minimal.id_token!, app)).payload.groups_direct).toEqual([]);
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 10 })).status).toBe(200);
    const guest = await signInWithKnock(bob.browser, app);
    expect((await verifyIdToken(guest.id_token!, app)).payload.groups_direct).toEqual([acme.full_path]);
  });
});

describe('applications', () => {
  it('register openid, profile and email through the admin API; personal access tokens may not carry them', async () => {
    const app = await registerApp({ scopes: 'openid profile email' });
    expect(app.clientId).toBeTruthy();
    const bob = await createUser('bob');
    for (const scope of ['openid', 'profile', 'email']) {
      const res = await admin.post(`/users/${bob.id}/impersonation_tokens`, { name: 'x', scopes: [scope] });
      expect(res.status, scope).toBe(400);
    }
    const refused = await admin.post('/applications', { name: 'x', redirect_uri: 'https://x.example/cb', scopes: 'openid phone' });
    expect(refused.status).toBe(400);
  });

  it('register openid, profile and email through the console, which offers them beside the API scopes', async () => {
    const { browser, csrf } = await consoleSession(await consoleUser('adm', { admin: true }));
    const form = await (await browser.get('/admin/applications')).text();
    for (const scope of ['api', 'read_api', 'read_user', 'openid', 'profile', 'email']) expect(form).toContain(`name="scopes" value="${scope}"`);
    const name = unique('RP ');
    const res = await browser.post('/admin/applications', { authenticity_token: csrf, name, redirect_uri: 'https://rp.example/cb', scopes: ['openid', 'email'], confidential: 'true' });
    expect(res.status).toBe(201);
    const list = textOf(await (await browser.get('/admin/applications')).text());
    expect(list).toMatch(new RegExp(`${name} confidential [0-9a-f]+ https://rp\\.example/cb openid, email`));
  });
});
