// "Passwords are stored with PBKDF2; tokens, codes and client secrets only as keyed
// hashes." Every secret the service ever handles in one run of the whole surface is looked for in
// every table of every Durable Object, every KV key and value, and everything written to the log.
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dumpKv, dumpTables, directoryStub, grantsStub, namespaceStub } from './support/storage';
import { ADMIN, Browser, call, jsonBody, unique } from './support/http';
import { authorizeCode, exchange, pkcePair, refresh, registerApp, tokenCall, type Tokens } from './support/oauth';
import { INSTANCE_SETTINGS_KEY } from '../../worker/store/instance-settings';
import { config } from '../../worker/config';

vi.setConfig({ testTimeout: 60_000 });

const logged: string[] = [];
const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

describe('secrets at rest and in logs', () => {
  /** Every secret handed out or received, by what it is. */
  const secrets = new Map<string, string>();
  const userIds = new Set<number>();
  const namespaceIds = new Set<number>();

  beforeAll(async () => {
    for (const method of consoleMethods) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
      });
    }
    secrets.set('ADMIN_TOKEN', env.ADMIN_TOKEN!);
    secrets.set('TOKEN_HASH_KEY', env.TOKEN_HASH_KEY!);

    // A user made by the administrator, and one who signs up.
    const adminMade = { username: unique('vault'), password: `admin-made-${crypto.randomUUID()}` };
    const created = await call('/api/v4/users', jsonBody({ ...adminMade, name: 'Vault' }, ADMIN));
    expect(created.status).toBe(201);
    userIds.add(((await created.json()) as { id: number }).id);
    secrets.set('password (admin API)', adminMade.password);

    const signUp = new Browser();
    const signUpPage = await signUp.get('/users/sign_up');
    const selfMade = { username: unique('self'), password: `signed-up-${crypto.randomUUID()}` };
    secrets.set('pre-sign-in CSRF cookie', signUp.cookies.get('knock_csrf')!);
    const signedUp = await signUp.post('/users/sign_up', { ...selfMade, name: 'Self', authenticity_token: Browser.csrf(await signUpPage.text()) });
    expect(signedUp.status).toBe(303);
    secrets.set('password (sign-up page)', selfMade.password);
    secrets.set('session cookie (sign-up)', signUp.cookies.get('knock_session')!);

    // A failed sign-in: the wrong password must not be kept either.
    const wrong = `wrong-guess-${crypto.randomUUID()}`;
    expect((await new Browser().signIn({ username: adminMade.username, password: wrong })).status).toBe(401);
    secrets.set('wrong password', wrong);

    // Applications, the authorization-code flow with PKCE, rotation and a retried refresh.
    const confidential = await registerApp();
    secrets.set('client secret', confidential.secret!);
    const browser = new Browser();
    await browser.signIn(adminMade);
    secrets.set('session cookie (sign-in)', browser.cookies.get('knock_session')!);
    const pkce = await pkcePair();
    const { code } = await authorizeCode(browser, confidential, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    secrets.set('authorization code', code);
    secrets.set('PKCE verifier', pkce.verifier);
    const first = await exchange(confidential, code, { code_verifier: pkce.verifier });
    const rotated = (await (await refresh(confidential, first.refresh_token)).json()) as Tokens;
    const retried = (await (await refresh(confidential, first.refresh_token)).json()) as Tokens;
    expect(retried.access_token).toBe(rotated.access_token);
    for (const [name, t] of [['first', first], ['rotated', rotated]] as const) {
      secrets.set(`access token (${name})`, t.access_token);
      secrets.set(`refresh token (${name})`, t.refresh_token);
    }
    // A replayed code and an introspection, so revocation tombstones and lookups are stored too.
    const { code: code2 } = await authorizeCode(browser, confidential);
    secrets.set('authorization code (replayed)', code2);
    const second = await exchange(confidential, code2);
    secrets.set('access token (replayed code)', second.access_token);
    secrets.set('refresh token (replayed code)', second.refresh_token);
    expect((await tokenCall({ client_id: confidential.clientId, client_secret: confidential.secret!, code: code2 })).status).toBe(400);
    expect((await tokenCall({ client_id: confidential.clientId, client_secret: confidential.secret!, token: rotated.access_token }, { path: '/login/oauth/introspect' })).status).toBe(200);

    // An impersonation token, and a group with an access request and an approval.
    for (const id of userIds) {
      const issued = await call(`/api/v4/users/${id}/impersonation_tokens`, jsonBody({ name: 'vault', scopes: ['api'] }, ADMIN));
      expect(issued.status).toBe(201);
      secrets.set('impersonation token', ((await issued.json()) as { token: string }).token);
      const personal = await call(`/api/v4/users/${id}/personal_access_tokens`, jsonBody({ name: 'vault', scopes: ['api'] }, ADMIN));
      expect(personal.status).toBe(201);
      const personalToken = ((await personal.json()) as { token: string }).token;
      secrets.set('personal access token', personalToken);
      // Used, so its last use is recorded, then revoked, so its tombstone is stored too.
      expect((await call('/api/v4/personal_access_tokens/self', { method: 'DELETE', headers: { 'PRIVATE-TOKEN': personalToken } })).status).toBe(204);
    }
    const me = (await (await call('/api/v4/user', { headers: { Authorization: `Bearer ${rotated.access_token}` } })).json()) as { id: number };
    userIds.add(me.id);
    const group = await call('/api/v4/groups', jsonBody({ name: unique('vg'), path: unique('vg'), visibility: 'public' }, ADMIN));
    const groupId = ((await group.json()) as { id: number }).id;
    namespaceIds.add(groupId);
    expect((await call(`/api/v4/groups/${groupId}/access_requests`, { method: 'POST', headers: { Authorization: `Bearer ${rotated.access_token}` } })).status).toBe(201);
    expect((await call(`/api/v4/groups/${groupId}/access_requests/${me.id}/approve`, { method: 'PUT', headers: ADMIN })).status).toBe(201);
    // Secrets in places they do not belong: a URL path and a header of a refused request.
    await call(`/api/v4/users/${encodeURIComponent(rotated.access_token)}`, { headers: { 'PRIVATE-TOKEN': rotated.refresh_token } });
    await call(`/login/oauth/access_token`, { method: 'POST', headers: { Authorization: `Basic ${btoa(`${confidential.clientId}:${confidential.secret}`)}` }, body: 'not json' });

    const signedUpUser = (await (await call(`/api/v4/users?username=${selfMade.username}`, { headers: ADMIN })).json()) as { id: number }[];
    userIds.add(signedUpUser[0].id);
  });

  afterAll(() => vi.restoreAllMocks());

  /** The parts of a secret that must not appear: the whole, and its random tail. */
  const needles = (secret: string) => [secret, secret.slice(-20)].filter((n) => n.length >= 16);

  /** Read once, after beforeAll wrote every secret: the stores hold every test file's data (one runtime). */
  let stored: Promise<{ dumps: Record<string, unknown>; kv: { key: string; value: string | null }[] }> | undefined;
  const everything = () => (stored ??= readEverything());
  const readEverything = async () => {
    const dumps: Record<string, unknown> = { directory: await dumpTables(directoryStub()) };
    for (const id of userIds) dumps[`grants ${id}`] = await dumpTables(grantsStub(id));
    for (const id of namespaceIds) dumps[`namespace ${id}`] = await dumpTables(namespaceStub(id));
    return { dumps, kv: await dumpKv() };
  };

  it('handled every kind of secret', () => {
    expect([...secrets.keys()]).toEqual(
      expect.arrayContaining([
        'ADMIN_TOKEN', 'TOKEN_HASH_KEY', 'password (admin API)', 'password (sign-up page)', 'wrong password', 'pre-sign-in CSRF cookie',
        'session cookie (sign-up)', 'session cookie (sign-in)', 'client secret', 'authorization code', 'PKCE verifier', 'access token (first)',
        'refresh token (first)', 'access token (rotated)', 'refresh token (rotated)', 'authorization code (replayed)', 'impersonation token',
        'personal access token',
      ]),
    );
    for (const [name, value] of secrets) expect(value, name).toMatch(/.{16,}/);
  });

  it('keeps none of them in any Durable Object table', async () => {
    const { dumps } = await everything();
    const text = JSON.stringify(dumps);
    expect(text.length).toBeGreaterThan(1000);
    for (const [name, secret] of secrets) for (const needle of needles(secret)) expect(text.includes(needle), `${name} stored in a Durable Object`).toBe(false);
  });

  it('keeps none of them in any KV key or value', async () => {
    const { kv } = await everything();
    expect(kv.length).toBeGreaterThan(3);
    const text = JSON.stringify(kv);
    for (const [name, secret] of secrets) for (const needle of needles(secret)) expect(text.includes(needle), `${name} stored in KV`).toBe(false);
    // Every key is a keyed hash, but the fixed key of the instance's settings (written once another
    // test file has set one). No copy of a user is kept under a fixed key (ADMIN_TOKEN's caller is
    // read from the Directory).
    const fixed = new Set([INSTANCE_SETTINGS_KEY]);
    // One assertion over the whole store (it holds every test file's keys): the keys that are neither.
    expect(kv.map(({ key }) => key).filter((key) => !fixed.has(key) && !/^[a-z]+:[A-Za-z0-9_-]{20,}$/.test(key))).toEqual([]);
  });

  it('stores passwords only as salted PBKDF2 hashes, at the configured iteration count', async () => {
    const { dumps } = await everything();
    const users = (dumps.directory as Record<string, Record<string, unknown>[]>).users.filter((u) => typeof u.password_hash === 'string');
    const format = /^pbkdf2-sha256\$[1-9][0-9]*\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/;
    expect(users.map((u) => u.password_hash as string).filter((h) => !format.test(h))).toEqual([]);
    // The users made here (other test files sharing the runtime store theirs at other counts, or
    // as an earlier version did): the configured count, and a salt each.
    const ours = users.filter((u) => userIds.has(u.id as number)).map((u) => u.password_hash as string);
    expect(ours.length).toBeGreaterThanOrEqual(2);
    const configured = new RegExp(`^pbkdf2-sha256\\$${config(env).passwordHashIterations}\\$[A-Za-z0-9_-]{16,}\\$[A-Za-z0-9_-]{40,}$`);
    for (const h of ours) expect(h).toMatch(configured);
    expect(new Set(ours.map((h) => h.split('$')[2])).size).toBe(ours.length);
  });

  it('logs none of them', () => {
    const text = logged.join('\n');
    for (const [name, secret] of secrets) for (const needle of needles(secret)) expect(text.includes(needle), `${name} was logged`).toBe(false);
  });
});
