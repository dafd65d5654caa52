// OpenID Connect Back-Channel Logout 1.0 and RP-Initiated Logout 1.0: the logout tokens Knock
// sends when access ends (each trigger, verified with jose against the JWKS), their delivery from
// the application's object's alarm (retried, logged, guarded), and the end-session endpoint.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { ADMIN, ORIGIN, call, createUser, unique } from './support/http';
import { as, createGroup, startWorker, type Person } from './support/namespaces';
import { Browser, authorizeCode, csrfOf, exchange, type App } from './support/oauth';
import { fetchJwks, OPENID_SCOPES, refreshed, verifyIdToken, type OidcTokens } from './support/oidc';
import { consoleSession, consoleUser, fieldErrorsOf } from './support/console';
import { Receiver, settle } from './support/receiver';
import { objectGate } from './support/object-gate';
import { grantsStub, runDueAlarms } from './support/storage';
import { treeIndex, type IndexPartition, type SourceCopy } from '../../worker/durable/index-partition/index-partition';

beforeAll(startWorker, 30_000);

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

interface LogoutApp extends App {
  logoutUri: string;
  afterLogout: string;
}

/** An application given `openid`, with a back-channel logout URI and a post-logout redirect URI. */
const logoutApp = async (): Promise<LogoutApp> => {
  const host = `${unique('rp')}.example.com`;
  const name = unique('RP ');
  const res = await call('/api/v4/applications', {
    method: 'POST',
    headers: { ...ADMIN, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name,
      redirect_uri: `https://${host}/callback`,
      scopes: OPENID_SCOPES,
      backchannel_logout_uri: `https://${host}/logout`,
      post_logout_redirect_uris: `https://${host}/bye https://${host}/later`,
    }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as { id: number; application_id: string; secret: string; backchannel_logout_uri: string; post_logout_redirect_uris: string[] };
  expect(body.backchannel_logout_uri).toBe(`https://${host}/logout`);
  expect(body.post_logout_redirect_uris).toEqual([`https://${host}/bye`, `https://${host}/later`]);
  return { id: body.id, clientId: body.application_id, secret: body.secret, name, redirectUri: `https://${host}/callback`, logoutUri: `https://${host}/logout`, afterLogout: `https://${host}/bye` };
};

/** A user signed in to the console in a browser, with an API token. */
const newUser = async (prefix: string) => {
  const u = await createUser(prefix);
  const person: Person = { id: u.id, username: u.username, name: `User ${u.username}`, headers: u.headers };
  const browser = new Browser();
  expect((await browser.signIn(u)).status).toBe(303);
  return { ...u, person, browser };
};

const signIn = async (browser: Browser, app: App): Promise<OidcTokens & { sid: string }> => {
  const { code } = await authorizeCode(browser, app, { scope: 'openid profile' });
  const tokens = (await exchange(app, code)) as OidcTokens;
  const { payload } = await verifyIdToken(tokens.id_token!, app);
  return { ...tokens, sid: payload.sid as string };
};

/** Runs the application's object's due alarm: the deliveries happen there, never on the request. */
const deliver = (app: App) => runDueAlarms(env.CLIENT_HOLDERS.getByName(app.clientId) as unknown as DurableObjectStub);

/** The logout tokens `app` received, each verified as a relying party must (Back-Channel Logout 1.0 §2.6). */
const logoutTokens = async (receiver: Receiver, app: LogoutApp): Promise<(JWTPayload & Record<string, unknown>)[]> => {
  const keys = createLocalJWKSet(await fetchJwks());
  const tokens = [];
  for (const d of receiver.received.filter((r) => r.url === app.logoutUri)) {
    expect(d.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(d.redirect).toBe('manual');
    const token = new URLSearchParams(d.body).get('logout_token') as string;
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', typ: 'logout+jwt' });
    const { payload } = await jwtVerify(token, keys, { issuer: ORIGIN, audience: app.clientId, typ: 'logout+jwt', algorithms: ['RS256'] });
    expect(payload.events).toEqual({ [EVENT]: {} });
    expect(payload).not.toHaveProperty('nonce');
    expect(payload.exp! - payload.iat!).toBe(120);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    tokens.push(payload as JWTPayload & Record<string, unknown>);
  }
  return tokens;
};

const logoutLog = async (app: App) => {
  const res = await call(`/api/v4/applications/${app.id}/logout_deliveries`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return (await res.json()) as { reason: string; attempt: number; response_status: number | null; error: string | null; user_id: number; sid: string | null }[];
};

describe('back-channel logout: who is told, and when', () => {
  it.each([
    ['blocked', (id: number) => call(`/api/v4/users/${id}/block`, { method: 'POST', headers: ADMIN })],
    ['deactivated', (id: number) => call(`/api/v4/users/${id}/deactivate`, { method: 'POST', headers: ADMIN })],
    ['deleted', (id: number) => call(`/api/v4/users/${id}`, { method: 'DELETE', headers: ADMIN })],
  ])('a user %s: each application they signed in to gets a logout token naming sub and sid; no other application', async (reason, act) => {
    const receiver = new Receiver();
    const [rp, other, unrelated] = [await logoutApp(), await logoutApp(), await logoutApp()];
    const bob = await newUser('bob');
    const atRp = await signIn(bob.browser, rp);
    const atOther = await signIn(bob.browser, other);
    expect(atRp.sid).toBe(atOther.sid);

    expect((await act(bob.id)).status).toBeLessThan(300);
    // Nothing was sent on the request's path: the applications' objects' alarms send.
    expect(receiver.received).toEqual([]);
    for (const app of [rp, other, unrelated]) await deliver(app);

    const [token] = await logoutTokens(receiver, rp);
    expect(token).toMatchObject({ sub: String(bob.id), sid: atRp.sid, aud: rp.clientId });
    expect(await logoutTokens(receiver, other)).toMatchObject([{ sub: String(bob.id), sid: atRp.sid }]);
    expect(await logoutTokens(receiver, unrelated)).toEqual([]);
    expect(receiver.received).toHaveLength(2);
    expect(await logoutLog(rp)).toMatchObject([{ reason, attempt: 1, response_status: 200, error: null, user_id: bob.id, sid: atRp.sid }]);
  });

  it('signing out everywhere tells every application of every session; signing out one session tells that session\'s', async () => {
    const receiver = new Receiver();
    const [rp, other] = [await logoutApp(), await logoutApp()];
    const bob = await newUser('bob');
    const laptop = new Browser();
    expect((await laptop.signIn(bob)).status).toBe(303);
    const here = await signIn(bob.browser, rp);
    const there = await signIn(laptop, other);
    expect(here.sid).not.toBe(there.sid);

    // One session signed out: only the application signed in through it is told.
    const page = await (await laptop.get('/-/profile')).text();
    expect((await laptop.post('/users/sign_out', { authenticity_token: csrfOf(page) })).status).toBe(303);
    await deliver(rp);
    await deliver(other);
    expect(await logoutTokens(receiver, rp)).toEqual([]);
    expect(await logoutTokens(receiver, other)).toMatchObject([{ sid: there.sid }]);

    const mine = await (await bob.browser.get('/-/profile')).text();
    expect((await bob.browser.post('/-/profile/sign_out_everywhere', { authenticity_token: csrfOf(mine) })).status).toBe(303);
    await deliver(rp);
    await deliver(other);
    expect(await logoutTokens(receiver, rp)).toMatchObject([{ sid: here.sid, sub: String(bob.id) }]);
    expect((await logoutLog(rp))[0].reason).toBe('signed_out_everywhere');
    // The laptop's application, whose grant lives on, is told again.
    expect((await logoutTokens(receiver, other)).map((t) => t.sid)).toEqual([there.sid, there.sid]);
  });

  it('revoking an application\'s authorization tells that application only', async () => {
    const receiver = new Receiver();
    const [rp, other] = [await logoutApp(), await logoutApp()];
    const bob = await newUser('bob');
    const tokens = await signIn(bob.browser, rp);
    await signIn(bob.browser, other);
    const page = await (await bob.browser.get('/oauth/authorized_applications')).text();
    expect((await bob.browser.post('/oauth/authorized_applications/revoke', { authenticity_token: csrfOf(page), client_id: rp.clientId })).status).toBe(303);
    await deliver(rp);
    await deliver(other);
    expect(await logoutTokens(receiver, rp)).toMatchObject([{ sid: tokens.sid }]);
    expect(await logoutTokens(receiver, other)).toEqual([]);
    expect((await logoutLog(rp))[0].reason).toBe('authorization_revoked');
  });

  it('losing a group a token named (demoted below its claim, expired, removed, deleted) logs that application out once; a promotion does not', async () => {
    const receiver = new Receiver();
    const rp = await logoutApp();
    const alice = await newUser('alice');
    const bob = await newUser('bob');
    const acme = await createGroup(alice.person);
    const received = async () => {
      await deliver(rp);
      return (await logoutTokens(receiver, rp)).length;
    };

    expect((await as(bob.person).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);
    expect((await as(alice.person).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    const developer = await signIn(bob.browser, rp);

    // Promoted (Developer → Maintainer): nothing lost. The refresh reads the claims again.
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 40 })).status).toBe(200);
    expect(await received()).toBe(0);
    const maintainer = await refreshed(rp, developer);

    // Demoted below the claim his token carries (Maintainer) to Reporter: one logout for the session.
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 20 })).status).toBe(200);
    expect(await received()).toBe(1);
    expect(await logoutTokens(receiver, rp)).toMatchObject([{ sid: developer.sid, sub: String(bob.id) }]);
    expect((await logoutLog(rp))[0].reason).toBe('membership_ended');
    // Told once: a further demotion finds nothing more its tokens named.
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 10 })).status).toBe(200);
    expect(await received()).toBe(1);
    // The grant goes on; its next refresh reads the claims again.
    await refreshed(rp, maintainer);

    // Expired: the group's object removes the membership at its expiry, and the token named it.
    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000).toISOString().slice(0, 10);
    expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 30, expires_at: tomorrow })).status).toBe(200);
    await signIn(bob.browser, rp);
    expect(await received()).toBe(1);
    advance(2 * 24 * 3600);
    await settle(acme.id);
    expect(await received()).toBe(2);

    // Removed.
    expect((await as(bob.person).post(`/groups/${acme.id}/access_requests`)).status).toBe(201);
    expect((await as(alice.person).put(`/groups/${acme.id}/access_requests/${bob.id}/approve`, { access_level: 30 })).status).toBe(201);
    await signIn(bob.browser, rp);
    expect((await as(alice.person).delete(`/groups/${acme.id}/members/${bob.id}`)).status).toBe(204);
    expect(await received()).toBe(3);

    // A group he is in deleted: as if removed.
    const beta = await createGroup(alice.person);
    expect((await as(alice.person).post(`/groups/${beta.id}/members`, { user_id: bob.id, access_level: 30 })).status).toBe(201);
    await signIn(bob.browser, rp);
    expect((await as(alice.person).delete(`/groups/${beta.id}`)).status).toBe(202);
    expect(await received()).toBe(4);
  });
});

/** An application with a back-channel logout URI, its receiver, and bob in alice's group acme at `level`. */
const bobInAcme = async (level: number) => {
  const receiver = new Receiver();
  const rp = await logoutApp();
  const alice = await newUser('alice');
  const bob = await newUser('bob');
  const acme = await createGroup(alice.person);
  expect((await as(alice.person).post(`/groups/${acme.id}/members`, { user_id: bob.id, access_level: level })).status).toBe(201);
  return { receiver, rp, alice, bob, acme };
};

describe('back-channel logout delivery', () => {
  it('is retried on the webhooks\' schedule after a failure, each attempt logged for administrators', async () => {
    const receiver = new Receiver();
    const rp = await logoutApp();
    const bob = await newUser('bob');
    const { sid } = await signIn(bob.browser, rp);
    receiver.respond = () => new Response('down', { status: 503 });
    expect((await call(`/api/v4/users/${bob.id}/block`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    await deliver(rp);
    expect(await logoutLog(rp)).toMatchObject([{ attempt: 1, response_status: 503, sid }]);
    // Not due again before the schedule's first step (5 s in wrangler.toml).
    await deliver(rp);
    expect(receiver.received).toHaveLength(1);
    receiver.respond = () => new Response(null, { status: 204 });
    advance(6);
    await deliver(rp);
    expect(await logoutLog(rp)).toMatchObject([{ attempt: 2, response_status: 204, error: null }, { attempt: 1, response_status: 503 }]);
    const [first, second] = await logoutTokens(receiver, rp);
    expect(second.jti).toBe(first.jti);
  });

  it("is handed over by the user's alarm when it could not be handed over at once", async () => {
    const receiver = new Receiver();
    const rp = await logoutApp();
    const bob = await newUser('bob');
    const { sid } = await signIn(bob.browser, rp);
    // What a crash right after the transaction that ended the access leaves: the row and the alarm.
    const user = grantsStub(bob.id);
    await runInDurableObject(user, async (_instance, state) => {
      state.storage.sql.exec("INSERT INTO logout_outbox (jti, client_id, sid, issuer, reason) VALUES (?, ?, ?, ?, 'signed_out')", crypto.randomUUID(), rp.clientId, sid, ORIGIN);
      await state.storage.setAlarm(Date.now());
    });
    expect(await runDurableObjectAlarm(user)).toBe(true);
    await deliver(rp);
    expect(await logoutTokens(receiver, rp)).toMatchObject([{ sid, sub: String(bob.id) }]);
  });

  it('for a lost group claim is not sent for a token issued while the claims were being read: a promotion is no loss', async () => {
    const { receiver, rp, alice, bob, acme } = await bobInAcme(30);
    const developer = await signIn(bob.browser, rp);
    // bob's `User` reads his claims for a check (Developer of acme) and is held with what it read.
    const user = env.USERS.getByName(String(bob.id));
    const gate = objectGate(user as unknown as DurableObjectStub);
    try {
      await gate.hold('claimsNow', 'after');
      const check = user.checkGroupClaims();
      await gate.held(0);
      // Meanwhile he is promoted, and his refresh issues a token that claims Maintainer of acme.
      expect((await as(alice.person).put(`/groups/${acme.id}/members/${bob.id}`, { access_level: 40 })).status).toBe(200);
      await refreshed(rp, developer);
      await gate.open();
      await check;
    } finally {
      await gate.open();
    }
    await deliver(rp);
    expect(await logoutTokens(receiver, rp)).toEqual([]);
  });

  it("for a lost group claim is sent by the index partition's alarm after a crash between its commit and the telling", async () => {
    const { receiver, rp, alice, bob, acme } = await bobInAcme(40);
    const { sid } = await signIn(bob.browser, rp);
    // The group's push of a demotion to Reporter commits in its tree's partition, which stops
    // before it tells bob's `User` (a crash): what `applyChanges` commits first, alone.
    const partition = treeIndex(env, acme.id, []);
    const source: SourceCopy = { id: acme.id, kind: 'group', name: acme.full_path, full_path: acme.full_path, visibility: 'public', version: 1, ancestorIds: [] };
    const demoted = { userId: bob.id, accessLevel: 20, createdAt: new Date().toISOString(), createdBy: alice.id, version: 1_000_000 };
    await runInDurableObject(partition, (instance: IndexPartition) => {
      expect(instance['applyLocally'](source, [demoted], [], [])).toBe(true);
    });
    await deliver(rp);
    expect(await logoutTokens(receiver, rp)).toEqual([]);
    expect(await runDurableObjectAlarm(partition)).toBe(true);
    await deliver(rp);
    expect(await logoutTokens(receiver, rp)).toMatchObject([{ sid, sub: String(bob.id) }]);
  });

  it('is refused at delivery too when the URI leads to a private address (registered while local addresses were allowed)', async () => {
    const receiver = new Receiver();
    const rp = await logoutApp();
    const bob = await newUser('bob');
    await signIn(bob.browser, rp);
    // The application's copy of its registration, as if registered with ALLOW_LOCAL_WEBHOOKS on.
    await runInDurableObject(env.CLIENT_HOLDERS.getByName(rp.clientId) as unknown as DurableObjectStub, (_instance, state) => {
      const row = JSON.parse(state.storage.sql.exec<{ row: string }>('SELECT row FROM application').one().row) as Record<string, unknown>;
      state.storage.sql.exec('UPDATE application SET row = ?', JSON.stringify({ ...row, backchannel_logout_uri: 'http://10.0.0.7/logout' }));
    });
    expect((await call(`/api/v4/users/${bob.id}/block`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    await deliver(rp);
    expect(receiver.received).toEqual([]);
    expect(await logoutLog(rp)).toMatchObject([{ attempt: 1, response_status: null, error: 'Url is blocked: Requests to the local network are not allowed' }]);
    // The retry is refused the same way.
    advance(6);
    await deliver(rp);
    expect(receiver.received).toEqual([]);
    expect((await logoutLog(rp)).map((l) => l.attempt)).toEqual([2, 1]);
  });

  it('refuses a back-channel logout URI on a private address at registration', async () => {
    for (const uri of ['http://127.0.0.1:9/logout', 'http://10.0.0.7/logout', 'http://localhost/logout']) {
      const res = await call('/api/v4/applications', {
        method: 'POST',
        headers: { ...ADMIN, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: unique('RP '), redirect_uri: 'https://rp.example.com/cb', scopes: 'openid', backchannel_logout_uri: uri }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: Record<string, string[]> }).message.backchannel_logout_uri[0]).toMatch(/^is blocked: Requests to/);
    }
  });

  it('is announced in the metadata with the end-session endpoint', async () => {
    const doc = (await (await call('/.well-known/openid-configuration')).json()) as Record<string, unknown>;
    expect(doc).toMatchObject({ end_session_endpoint: `${ORIGIN}/oauth/logout`, backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });
});

describe("the administrators' applications page", () => {
  it('registers the logout fields, and shows a blocked back-channel URI beside its field', async () => {
    const { browser, csrf } = await consoleSession(await consoleUser('adm', { admin: true }));
    const name = unique('Console RP ');
    const fields = { authenticity_token: csrf, name, redirect_uri: 'https://rp.example.com/cb', scopes: ['openid', 'profile'], confidential: 'true' };
    const created = await browser.post('/admin/applications', { ...fields, backchannel_logout_uri: 'https://rp.example.com/logout', post_logout_redirect_uris: 'https://rp.example.com/bye' });
    expect(created.status).toBe(201);
    const listed = ((await (await call('/api/v4/applications', { headers: ADMIN })).json()) as { application_name: string; backchannel_logout_uri: string; post_logout_redirect_uris: string[] }[]).find(
      (a) => a.application_name === name,
    );
    expect(listed).toMatchObject({ backchannel_logout_uri: 'https://rp.example.com/logout', post_logout_redirect_uris: ['https://rp.example.com/bye'] });
    const page = await (await browser.get('/admin/applications')).text();
    expect(page).toContain('<code>https://rp.example.com/logout</code>');

    const blocked = await browser.post('/admin/applications', { ...fields, name: unique('Blocked RP '), backchannel_logout_uri: 'http://169.254.169.254/logout' });
    expect(blocked.status).toBe(400);
    expect(fieldErrorsOf(await blocked.text())).toEqual(['Back-channel logout URI is blocked: Requests to the link local network are not allowed.']);
  });
});

describe('RP-initiated logout at /oauth/logout', () => {
  it('with an id_token_hint: ends the session, tells the session\'s other applications, and redirects only to a registered URI with state', async () => {
    const receiver = new Receiver();
    const [rp, other] = [await logoutApp(), await logoutApp()];
    const bob = await newUser('bob');
    const tokens = await signIn(bob.browser, rp);
    await signIn(bob.browser, other);
    const hint = tokens.id_token!;

    const unregistered = await bob.browser.get(`/oauth/logout?${new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example.com/' })}`);
    expect(unregistered.status).toBe(400);
    expect((await bob.browser.get('/')).status).toBe(200);

    const res = await bob.browser.get(`/oauth/logout?${new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: rp.afterLogout, state: 'xyz' })}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe(`${rp.afterLogout}?state=xyz`);
    expect((await bob.browser.get('/')).status).toBe(302);
    await deliver(rp);
    await deliver(other);
    expect(await logoutTokens(receiver, rp)).toEqual([]);
    expect(await logoutTokens(receiver, other)).toMatchObject([{ sid: tokens.sid }]);
  });

  it('without a hint asks first, and signs out only on its own form', async () => {
    const rp = await logoutApp();
    const bob = await newUser('bob');
    const asked = await bob.browser.get(`/oauth/logout?${new URLSearchParams({ client_id: rp.clientId, post_logout_redirect_uri: rp.afterLogout })}`);
    expect(asked.status).toBe(200);
    const page = await asked.text();
    expect(page).toContain('Sign out of Knock?');
    // A cross-site POST without the form's token is a request, not the answer: asked again.
    const forged = await bob.browser.post('/oauth/logout', { client_id: rp.clientId, decision: 'sign_out', authenticity_token: 'A'.repeat(32) }, { Origin: 'https://evil.example.com' });
    expect(forged.status).toBe(200);
    expect((await bob.browser.get('/')).status).toBe(200);
    const done = await bob.browser.post('/oauth/logout', { client_id: rp.clientId, post_logout_redirect_uri: rp.afterLogout, decision: 'sign_out', authenticity_token: csrfOf(page) });
    expect(done.status).toBe(303);
    expect(done.headers.get('Location')).toBe(rp.afterLogout);
    expect((await bob.browser.get('/')).status).toBe(302);
  });

  it('refuses a forged id_token_hint and a redirect URI without an application', async () => {
    const bob = await newUser('bob');
    expect((await bob.browser.get('/oauth/logout?id_token_hint=eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.')).status).toBe(400);
    expect((await bob.browser.get(`/oauth/logout?post_logout_redirect_uri=${encodeURIComponent('https://rp.example.com/bye')}`)).status).toBe(400);
    expect((await bob.browser.get('/')).status).toBe(200);
  });
});
