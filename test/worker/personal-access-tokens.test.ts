import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { recordTokenUse } from '../../worker/services/access-tokens';
import { hashSecret } from '../../worker/store/tokens';
import { advance } from './support/clock';
import { expectError } from './support/contract';
import { ADMIN, call, createUser, issueToken, jsonBody, unique, type TestUser } from './support/http';
import { authorizeCode, exchange, registerApp, signedIn } from './support/oauth';
import { dumpKv, dumpTables, directoryStub } from './support/storage';

interface Pat {
  id: number;
  name: string;
  revoked: boolean;
  created_at: string;
  scopes: string[];
  user_id: number;
  last_used_at: string | null;
  active: boolean;
  expires_at: string;
}
type NewPat = Pat & { token: string };

const DAY = 24 * 3600 * 1000;
const dateIn = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);

/** A personal access token the user makes for themselves. */
const create = async (user: Pick<TestUser, 'headers'>, body: Record<string, unknown> = {}): Promise<NewPat> => {
  const res = await call('/api/v4/user/personal_access_tokens', jsonBody({ name: 'script', scopes: ['api'], ...body }, user.headers));
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as NewPat;
};

const withToken = (token: string) => ({ 'PRIVATE-TOKEN': token });
const get = (path: string, headers: Record<string, string>) => call(`/api/v4${path}`, { headers });
const del = (path: string, headers: Record<string, string>) => call(`/api/v4${path}`, { method: 'DELETE', headers });
const listed = async (query: string, headers: Record<string, string>) => {
  const res = await get(`/personal_access_tokens${query}`, headers);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as Pat[]).map((t) => t.id);
};

describe('creating a personal access token', () => {
  it("answers GitLab's entity with the token, once; the token works as PRIVATE-TOKEN and as Bearer", async () => {
    const user = await createUser('pat');
    const expires = dateIn(30);
    const made = await create(user, { name: 'deploy script', scopes: ['read_api', 'read_user'], expires_at: expires });
    expect(made).toEqual({
      id: expect.any(Number), name: 'deploy script', revoked: false, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      scopes: ['read_api', 'read_user'], user_id: user.id, last_used_at: null, active: true, expires_at: expires, token: expect.stringMatching(/^knock_at_/),
    });
    for (const headers of [withToken(made.token), { Authorization: `Bearer ${made.token}` }]) {
      const me = await get('/user', headers);
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: user.id, username: user.username });
    }
    const one = await get(`/personal_access_tokens/${made.id}`, user.headers);
    expect(one.status).toBe(200);
    const shown = (await one.json()) as Pat;
    expect(shown).not.toHaveProperty('token');
    expect(shown).toEqual({ ...made, token: undefined, last_used_at: shown.last_used_at });
  });

  it('is stored as a keyed hash only: neither the Directory nor KV holds the token', async () => {
    const user = await createUser('hash');
    const made = await create(user);
    const tables = JSON.stringify(await dumpTables(directoryStub()));
    const kv = JSON.stringify(await dumpKv());
    for (const needle of [made.token, made.token.slice(-20)]) {
      expect(tables.includes(needle)).toBe(false);
      expect(kv.includes(needle)).toBe(false);
    }
    const hash = await hashSecret(env, made.token);
    expect(tables).toContain(hash);
    expect(kv).toContain(`at:${hash}`);
  });

  it('lets an administrator create one for any user (POST /users/:id/personal_access_tokens), and no one else', async () => {
    const [user, other] = await Promise.all([createUser('pfor'), createUser('pother')]);
    const res = await call(`/api/v4/users/${user.id}/personal_access_tokens`, jsonBody({ name: 'ci', scopes: 'api,read_user' }, ADMIN));
    expect(res.status).toBe(201);
    const made = (await res.json()) as NewPat;
    expect(made).toMatchObject({ user_id: user.id, scopes: ['api', 'read_user'], active: true });
    expect(made).not.toHaveProperty('impersonation');
    expect(await (await get('/user', withToken(made.token))).json()).toMatchObject({ id: user.id });

    await expectError(await call(`/api/v4/users/${user.id}/personal_access_tokens`, jsonBody({ name: 'x', scopes: ['api'] }, other.headers)), 403, { message: '403 Forbidden' });
    await expectError(await call('/api/v4/users/999999999/personal_access_tokens', jsonBody({ name: 'x', scopes: ['api'] }, ADMIN)), 404, { message: '404 User Not Found' });
    // The admin token (root) may make its own, as any caller may.
    const rootsOwn = await call('/api/v4/user/personal_access_tokens', jsonBody({ name: 'root script', scopes: ['api'] }, ADMIN));
    expect(rootsOwn.status).toBe(201);
  });

  it('refuses missing or unknown names and scopes, and expiry dates that are not in the next 365 days', async () => {
    const user = await createUser('pbad');
    const post = (body: Record<string, unknown>) => call('/api/v4/user/personal_access_tokens', jsonBody(body, user.headers));
    await expectError(await post({ scopes: ['api'] }), 400, { error: 'name is missing' });
    await expectError(await post({ name: 'x' }), 400, { error: 'scopes is missing' });
    await expectError(await post({ name: 'x', scopes: ['sudo'] }), 400, { error: 'scopes does not have a valid value' });
    await expectError(await post({ name: 'x', scopes: [] }), 400, { error: 'scopes does not have a valid value' });
    await expectError(await post({ name: 'x', scopes: ['api'], expires_at: '2027-02-30' }), 400, { error: 'expires_at is invalid' });
    await expectError(await post({ name: 'x', scopes: ['api'], expires_at: dateIn(0) }), 400, { message: { expires_at: ['cannot be a date in the past'] } });
    await expectError(await post({ name: 'x', scopes: ['api'], expires_at: '2001-01-01' }), 400, { message: { expires_at: ['cannot be a date in the past'] } });
    const tooFar = await post({ name: 'x', scopes: ['api'], expires_at: dateIn(400) });
    expect(tooFar.status).toBe(400);
    expect(await tooFar.json()).toEqual({ message: { expires_at: [expect.stringMatching(/^must be on or before \d{4}-\d\d-\d\d$/)] } });
    expect((await listed('', user.headers)).length).toBe(0);
  });

  it("expires at 00:00 UTC of expires_at (by default in 365 days) with GitLab's 401, and is then listed inactive", async () => {
    const user = await createUser('pexp');
    const byDefault = await create(user);
    expect(byDefault.expires_at).toBe(new Date(Date.now() + 365 * DAY).toISOString().slice(0, 10));
    const soon = await create(user, { expires_at: dateIn(2) });
    expect((await get('/user', withToken(soon.token))).status).toBe(200);

    advance(3 * 24 * 3600);
    const expired = await get('/user', withToken(soon.token));
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' });
    expect(expired.headers.get('WWW-Authenticate')).toMatch(/error="invalid_token"/);
    expect(await listed('?state=inactive', user.headers)).toEqual([soon.id]);
    expect(await listed('?state=active', user.headers)).toEqual([byDefault.id]);
  });
});

describe('scopes', () => {
  it('read_user reads /user and /users only; read_api reads everything; api writes', async () => {
    const user = await createUser('pscope');
    const readUser = withToken((await create(user, { scopes: ['read_user'] })).token);
    const readApi = withToken((await create(user, { scopes: ['read_api'] })).token);

    for (const path of ['/user', '/users', `/users/${user.id}`, `/users?username=${user.username}`]) expect((await get(path, readUser)).status, path).toBe(200);
    for (const path of ['/groups', '/projects', '/personal_access_tokens', '/version']) {
      await expectError(await get(path, readUser), 403, {
        error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api read_api',
      });
    }
    const write = await call('/api/v4/user/personal_access_tokens', jsonBody({ name: 'x', scopes: ['api'] }, readUser));
    await expectError(write, 403, { error: 'insufficient_scope', error_description: expect.any(String), scope: 'api' });
    expect(write.headers.get('WWW-Authenticate')).toBe('Bearer realm="Knock", error="insufficient_scope", scope="api"');

    expect((await get('/groups', readApi)).status).toBe(200);
    expect((await get('/personal_access_tokens', readApi)).status).toBe(200);
    await expectError(await call('/api/v4/groups', jsonBody({ name: 'g', path: unique('g') }, readApi)), 403, { error: 'insufficient_scope', error_description: expect.any(String), scope: 'api' });
    await expectError(await call('/api/v4/user/personal_access_tokens', jsonBody({ name: 'x', scopes: ['api'] }, readApi)), 403, {
      error: 'insufficient_scope', error_description: expect.any(String), scope: 'api',
    });
  });

  it('any scope may read and revoke the token it is (/personal_access_tokens/self)', async () => {
    const user = await createUser('pself');
    for (const scopes of [['read_user'], ['read_api'], ['api']]) {
      const made = await create(user, { scopes });
      const self = await get('/personal_access_tokens/self', withToken(made.token));
      expect(self.status).toBe(200);
      expect(await self.json()).toMatchObject({ id: made.id, scopes, active: true });
      expect((await del('/personal_access_tokens/self', withToken(made.token))).status).toBe(204);
      const after = await get('/personal_access_tokens/self', withToken(made.token));
      expect(after.status).toBe(401);
      expect(await after.json()).toEqual({ error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
    }
  });
});

describe('listing personal access tokens', () => {
  it("shows a user their own personal access tokens, newest first, and never another user's or an impersonation token", async () => {
    const [user, other] = await Promise.all([createUser('plist'), createUser('plistother')]);
    const first = await create(user, { name: 'first' });
    const second = await create(user, { name: 'second' });
    await create(other);
    // createUser's token is an impersonation token, which is not the user's to list.
    expect(await listed('', user.headers)).toEqual([second.id, first.id]);
    expect(await listed(`?user_id=${user.id}`, user.headers)).toEqual([second.id, first.id]);
    await expectError(await get(`/personal_access_tokens?user_id=${other.id}`, user.headers), 401, { message: '401 Unauthorized' });

    const page = await get('/personal_access_tokens?per_page=1&page=2', user.headers);
    expect(page.headers.get('X-Total')).toBe('2');
    expect(((await page.json()) as Pat[]).map((t) => t.id)).toEqual([first.id]);
  });

  it("shows an administrator everyone's tokens, or one user's with user_id (impersonation tokens too)", async () => {
    const [user, other] = await Promise.all([createUser('padm'), createUser('padmother')]);
    const mine = await create(user);
    const theirs = await create(other);
    const all = await listed('?per_page=100', ADMIN);
    expect(all).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    const onlyUser = await get(`/personal_access_tokens?user_id=${user.id}`, ADMIN);
    const rows = (await onlyUser.json()) as Pat[];
    expect(rows.map((t) => t.id)[0]).toBe(mine.id);
    expect(rows.every((t) => t.user_id === user.id)).toBe(true);
    expect(rows.length).toBe(2); // the PAT and createUser's impersonation token
    await expectError(await get('/personal_access_tokens?user_id=999999999', ADMIN), 404, { message: '404 User Not Found' });
  });

  it("takes GitLab's filters: state, revoked, search, created_*, last_used_*, expires_*", async () => {
    const user = await createUser('pfilter');
    const h = user.headers;
    const before = new Date(Date.now() - 1000).toISOString();
    const alpha = await create(user, { name: 'Alpha deploy', expires_at: dateIn(10) });
    const beta = await create(user, { name: 'beta', expires_at: dateIn(100) });
    const gamma = await create(user, { name: 'gamma DEPLOY' });
    expect((await del(`/personal_access_tokens/${beta.id}`, h)).status).toBe(204);
    expect((await get('/user', withToken(gamma.token))).status).toBe(200);
    await vi.waitFor(async () => expect(((await (await get(`/personal_access_tokens/${gamma.id}`, h)).json()) as Pat).last_used_at).not.toBeNull());

    expect(await listed('?state=active', h)).toEqual([gamma.id, alpha.id]);
    expect(await listed('?state=inactive', h)).toEqual([beta.id]);
    expect(await listed('?revoked=true', h)).toEqual([beta.id]);
    expect(await listed('?revoked=false', h)).toEqual([gamma.id, alpha.id]);
    expect(await listed('?search=deploy', h)).toEqual([gamma.id, alpha.id]);
    expect(await listed(`?created_after=${encodeURIComponent(before)}`, h)).toEqual([gamma.id, beta.id, alpha.id]);
    expect(await listed(`?created_before=${encodeURIComponent(before)}`, h)).toEqual([]);
    expect(await listed(`?created_before=${dateIn(1)}`, h)).toEqual([gamma.id, beta.id, alpha.id]);
    expect(await listed(`?last_used_after=${encodeURIComponent(before)}`, h)).toEqual([gamma.id]);
    expect(await listed(`?last_used_before=${dateIn(1)}`, h)).toEqual([gamma.id]);
    expect(await listed(`?expires_before=${dateIn(11)}`, h)).toEqual([alpha.id]);
    expect(await listed(`?expires_after=${dateIn(10)}`, h)).toEqual([gamma.id, beta.id]);
    expect(await listed('?search=deploy&state=active&expires_before=' + dateIn(11), h)).toEqual([alpha.id]);

    for (const bad of ['state=expired', 'revoked=maybe', 'created_after=yesterday', 'last_used_before=2026-13-01', 'expires_before=2026-02-30', 'user_id=0', 'per_page=0']) {
      const res = await get(`/personal_access_tokens?${bad}`, h);
      expect(res.status, bad).toBe(400);
      expect(await res.json(), bad).toEqual({ error: expect.stringMatching(/ (is invalid|does not have a valid value)$/) });
    }
  });
});

describe('one personal access token', () => {
  it('is shown to its user and to administrators; others get 401, and only administrators learn an id is unknown', async () => {
    const [user, other, admin] = await Promise.all([createUser('pone'), createUser('poneother'), createUser('poneadmin', { admin: true })]);
    const made = await create(user);
    expect((await get(`/personal_access_tokens/${made.id}`, user.headers)).status).toBe(200);
    expect((await get(`/personal_access_tokens/${made.id}`, admin.headers)).status).toBe(200);
    expect((await get(`/personal_access_tokens/${made.id}`, ADMIN)).status).toBe(200);
    await expectError(await get(`/personal_access_tokens/${made.id}`, other.headers), 401, { message: '401 Unauthorized' });
    await expectError(await get('/personal_access_tokens/999999999', other.headers), 401, { message: '401 Unauthorized' });
    await expectError(await get('/personal_access_tokens/999999999', ADMIN), 404, { message: '404 Personal Access Token Not Found' });
    await expectError(await get('/personal_access_tokens/abc', user.headers), 400, { error: 'id is invalid' });
  });

  it('is revoked by its user or an administrator, and the next request with it is 401', async () => {
    const [user, other] = await Promise.all([createUser('prev'), createUser('prevother')]);
    const mine = await create(user);
    const second = await create(user);
    expect((await get('/user', withToken(mine.token))).status).toBe(200);

    await expectError(await del(`/personal_access_tokens/${mine.id}`, other.headers), 400, { message: '400 Bad request' });
    expect((await get('/user', withToken(mine.token))).status).toBe(200);
    await expectError(await del('/personal_access_tokens/999999999', user.headers), 404, { message: '404 Personal Access Token Not Found' });

    expect((await del(`/personal_access_tokens/${mine.id}`, user.headers)).status).toBe(204);
    const after = await get('/user', withToken(mine.token));
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
    expect(await (await get(`/personal_access_tokens/${mine.id}`, user.headers)).json()).toMatchObject({ revoked: true, active: false });
    expect((await del(`/personal_access_tokens/${mine.id}`, user.headers)).status).toBe(204);

    expect((await del(`/personal_access_tokens/${second.id}`, ADMIN)).status).toBe(204);
    expect((await get('/user', withToken(second.token))).status).toBe(401);
  });

  it("is not the user's when it is an impersonation token: 401 to read, 400 to revoke, itself included", async () => {
    const user = await createUser('pimp');
    const impersonation = (await (await call(`/api/v4/users/${user.id}/impersonation_tokens`, jsonBody({ name: 'imp', scopes: ['api'] }, ADMIN))).json()) as NewPat;
    await expectError(await get(`/personal_access_tokens/${impersonation.id}`, user.headers), 401, { message: '401 Unauthorized' });
    await expectError(await del(`/personal_access_tokens/${impersonation.id}`, user.headers), 400, { message: '400 Bad request' });
    const self = await get('/personal_access_tokens/self', withToken(impersonation.token));
    expect(self.status).toBe(200);
    expect(await self.json()).toMatchObject({ id: impersonation.id, user_id: user.id });
    await expectError(await del('/personal_access_tokens/self', withToken(impersonation.token)), 400, { message: '400 Bad request' });
    expect((await get('/user', withToken(impersonation.token))).status).toBe(200);
    expect((await del(`/personal_access_tokens/${impersonation.id}`, ADMIN)).status).toBe(204);
    expect((await get('/user', withToken(impersonation.token))).status).toBe(401);
  });
});

describe('/personal_access_tokens/self', () => {
  it('is 400 for a token that is not a personal access token: OAuth tokens and the admin token', async () => {
    const { browser } = await signedIn('pself');
    const app = await registerApp();
    const oauth = await exchange(app, (await authorizeCode(browser, app)).code);
    const message = { message: '400 Bad request - This endpoint requires token type to be a personal access token' };
    for (const headers of [{ Authorization: `Bearer ${oauth.access_token}` }, ADMIN]) {
      await expectError(await get('/personal_access_tokens/self', headers), 400, message);
      await expectError(await del('/personal_access_tokens/self', headers), 400, message);
    }
    expect((await get('/user', { Authorization: `Bearer ${oauth.access_token}` })).status).toBe(200);
  });
});

describe('last_used_at', () => {
  it('is recorded after the token is used', async () => {
    const user = await createUser('pused');
    const made = await create(user);
    const lastUsed = async () => ((await (await get(`/personal_access_tokens/${made.id}`, user.headers)).json()) as Pat).last_used_at;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    expect((await get('/user', withToken(made.token))).status).toBe(200);
    await vi.waitFor(async () => expect(await lastUsed()).not.toBeNull());
    expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('moves at most every 10 minutes: the Directory refuses an earlier write, and an isolate does not send one', async () => {
    const user = await createUser('pthrottle');
    const made = await create(user);
    const directory = env.DIRECTORY.getByName('directory');
    const at = (minutes: number) => new Date(Date.parse('2030-01-01T00:00:00.000Z') + minutes * 60_000).toISOString();
    const stored = async () => (await directory.getAccessToken(made.id))?.last_used_at;
    const touch = (minutes: number) => directory.touchAccessToken(made.id, at(minutes), at(minutes - 10));
    await touch(0);
    expect(await stored()).toBe(at(0));
    await touch(5);
    expect(await stored()).toBe(at(0));
    await touch(11);
    expect(await stored()).toBe(at(11));

    // This isolate's record of uses: one write per token per interval.
    const other = await create(user);
    const lastUse = async () => Date.parse((await directory.getAccessToken(other.id))!.last_used_at!);
    const write = recordTokenUse(env, other.id);
    expect(write).not.toBeNull();
    await write;
    const first = await lastUse();
    advance(9 * 60);
    expect(recordTokenUse(env, other.id)).toBeNull();
    advance(11 * 60);
    const later = recordTokenUse(env, other.id);
    expect(later).not.toBeNull();
    await later;
    expect(await lastUse()).toBeGreaterThanOrEqual(first + 20 * 60_000);
  });
});

describe('a token whose user is renamed', () => {
  it('is still itself: it shows the new name, /self answers it, and its use is recorded', async () => {
    const user = await createUser('pren');
    const personal = await create(user, { scopes: ['read_api'] });
    const issued = await call(`/api/v4/users/${user.id}/impersonation_tokens`, jsonBody({ name: 'imp', scopes: ['read_api'] }, ADMIN));
    expect(issued.status).toBe(201);
    const impersonation = (await issued.json()) as NewPat;
    const username = unique('pren');
    expect((await call(`/api/v4/users/${user.id}`, jsonBody({ username }, ADMIN, 'PUT'))).status).toBe(200);
    // The user fan-out rewrote each token's KV record with the new profile, keeping its row.
    for (const made of [personal, impersonation]) {
      expect(await (await get('/user', withToken(made.token))).json()).toMatchObject({ id: user.id, username });
      const self = await get('/personal_access_tokens/self', withToken(made.token));
      expect(self.status, await self.clone().text()).toBe(200);
      expect(await self.json()).toMatchObject({ id: made.id, user_id: user.id });
      const stored = async () => (await env.DIRECTORY.getByName('directory').getAccessToken(made.id))?.last_used_at;
      await vi.waitFor(async () => expect(await stored()).not.toBeNull());
    }
  });
});

/**
 * Who may do what, computed here from GitLab's rules rather than from Knock's policy code: a
 * personal access token is seen and revoked by its user and by administrators; reading someone
 * else's is 401, revoking it 400; listing is one's own.
 */
describe('who may do what with a personal access token', () => {
  type Caller = 'owner' | 'other' | 'admin user' | 'root' | 'owner read_api' | 'owner read_user' | 'anonymous' | 'garbage';
  const CALLERS: Caller[] = ['owner', 'other', 'admin user', 'root', 'owner read_api', 'owner read_user', 'anonymous', 'garbage'];
  const OPERATIONS = ['read', 'revoke', 'list mine', "list the owner's"] as const;

  const expected = (who: Caller, op: (typeof OPERATIONS)[number]): number => {
    if (who === 'anonymous' || who === 'garbage') return 401;
    const admin = who === 'admin user' || who === 'root';
    const owner = who.startsWith('owner');
    if (who === 'owner read_user') return 403; // none of these routes is under /user or /users
    const readOnly = who === 'owner read_api';
    switch (op) {
      case 'read':
        return admin || owner ? 200 : 401;
      case 'revoke':
        if (readOnly) return 403;
        return admin || owner ? 204 : 400;
      case 'list mine':
        return 200;
      case "list the owner's":
        return admin || owner ? 200 : 401;
    }
  };

  it('answers every caller and operation as the rules say', async () => {
    const [owner, other, adminUser] = await Promise.all([createUser('mown'), createUser('moth'), createUser('madm', { admin: true })]);
    const headersOf = async (who: Caller): Promise<Record<string, string>> => {
      switch (who) {
        case 'owner': return owner.headers;
        case 'other': return other.headers;
        case 'admin user': return adminUser.headers;
        case 'root': return ADMIN;
        case 'owner read_api': return withToken(await issueToken(owner.id, owner.username, ['read_api']));
        case 'owner read_user': return withToken(await issueToken(owner.id, owner.username, ['read_user']));
        case 'anonymous': return {};
        case 'garbage': return withToken('knock_at_zzz_garbage');
      }
    };
    const seen: string[] = [];
    const wanted: string[] = [];
    for (const who of CALLERS) {
      const headers = await headersOf(who);
      for (const op of OPERATIONS) {
        const target = await create(owner, { name: `${who} ${op}` });
        const res =
          op === 'read' ? await get(`/personal_access_tokens/${target.id}`, headers)
          : op === 'revoke' ? await del(`/personal_access_tokens/${target.id}`, headers)
          : op === 'list mine' ? await get('/personal_access_tokens', headers)
          : await get(`/personal_access_tokens?user_id=${owner.id}`, headers);
        seen.push(`${who} ${op}: ${res.status}`);
        wanted.push(`${who} ${op}: ${expected(who, op)}`);
        // A refused revocation leaves the token working; an accepted one ends it.
        if (op === 'revoke') expect((await get('/user', withToken(target.token))).status, `${who} revoke`).toBe(res.status === 204 ? 401 : 200);
      }
    }
    expect(seen).toEqual(wanted);
  });
});
