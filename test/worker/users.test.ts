import { describe, expect, it } from 'vitest';
import { ADMIN, Browser, call, createUser, jsonBody, unique } from './support/http';

describe('users API', () => {
  it('lets the admin token create a user, as root', async () => {
    const username = unique('ann');
    const res = await call('/api/v4/users', jsonBody({ username, name: 'Ann', password: 'correct-horse', email: `${username}@x.test` }, ADMIN));
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    const user = (await res.json()) as Record<string, unknown>;
    expect(user).toMatchObject({ username, name: 'Ann', state: 'active', is_admin: false, email: `${username}@x.test` });
    expect(user).not.toHaveProperty('password');
    expect(user).not.toHaveProperty('password_hash');

    const me = await call('/api/v4/user', { headers: ADMIN });
    expect(await me.json()).toMatchObject({ username: 'root', is_admin: true });
  });

  it('accepts a form-encoded body and Bearer authentication', async () => {
    const username = unique('form');
    const res = await call('/api/v4/users', {
      method: 'POST',
      headers: { Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, name: 'Form User', password: 'long-enough', admin: 'true' }).toString(),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ username, is_admin: true });
  });

  it('refuses non-admins (403) and anonymous callers (401)', async () => {
    const bob = await createUser('bob');
    const body = { username: unique('x'), name: 'X', password: 'long-enough' };
    expect((await call('/api/v4/users', jsonBody(body, bob.headers))).status).toBe(403);
    const anon = await call('/api/v4/users', jsonBody(body));
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual({ message: '401 Unauthorized' });
    const wrong = await call('/api/v4/users', jsonBody(body, { 'PRIVATE-TOKEN': 'nope' }));
    expect(wrong.status).toBe(401);
  });

  it('validates input with GitLab-style messages', async () => {
    const missing = await call('/api/v4/users', jsonBody({ name: 'No Username', password: 'long-enough' }, ADMIN));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'username is missing' });
    const short = await call('/api/v4/users', jsonBody({ username: unique('s'), name: 'S', password: 'short' }, ADMIN));
    expect(await short.json()).toEqual({ error: 'password is invalid' });
    const badName = await call('/api/v4/users', jsonBody({ username: '-bad name', name: 'S', password: 'long-enough' }, ADMIN));
    expect(badName.status).toBe(400);
    const wrongType = await call('/api/v4/users', jsonBody({ username: 42, name: 'S', password: 'long-enough' }, ADMIN));
    expect(await wrongType.json()).toEqual({ error: 'username is invalid' });
  });

  it('refuses a taken username, case-insensitively (409)', async () => {
    const username = unique('dup');
    expect((await call('/api/v4/users', jsonBody({ username, name: 'A', password: 'long-enough' }, ADMIN))).status).toBe(201);
    const again = await call('/api/v4/users', jsonBody({ username: username.toUpperCase(), name: 'B', password: 'long-enough' }, ADMIN));
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ message: 'Username has already been taken' });
  });

  it('gives exactly one 201 for 20 concurrent creations of one username', async () => {
    const username = unique('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call('/api/v4/users', jsonBody({ username, name: 'Racer', password: 'long-enough' }, ADMIN))),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const found = await call(`/api/v4/users?username=${username}`, { headers: ADMIN });
    expect(await found.json()).toHaveLength(1);
  });

  it('finds users by username and id, hiding private fields from others', async () => {
    const carol = await createUser('carol');
    const dave = await createUser('dave');
    const list = await call(`/api/v4/users?username=${carol.username.toUpperCase()}`, { headers: dave.headers });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total')).toBe('1');
    const [found] = (await list.json()) as { id: number }[];
    expect(found.id).toBe(carol.id);

    const byId = await call(`/api/v4/users/${carol.id}`, { headers: dave.headers });
    const body = (await byId.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: carol.id, username: carol.username });
    expect(body).not.toHaveProperty('email');

    const self = await call(`/api/v4/users/${carol.id}`, { headers: carol.headers });
    expect(await self.json()).toHaveProperty('email');

    const missing = await call('/api/v4/users/99999999', { headers: dave.headers });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: '404 User Not Found' });
    expect((await call('/api/v4/users/abc', { headers: dave.headers })).status).toBe(400);
  });

  it("searches names and usernames; a private email only for administrators, and only whole (GitLab's User.search)", async () => {
    const hidden = unique('hiddencorp');
    const res = await call('/api/v4/users', jsonBody({ username: unique('quiet'), name: 'Quiet Person', password: 'long-enough-pw', email: `q.person@${hidden}.example` }, ADMIN));
    const quiet = (await res.json()) as { id: number; username: string };
    const stranger = await createUser('stranger');
    const ids = async (search: string, headers: Record<string, string>) => {
      const found = await call(`/api/v4/users?search=${encodeURIComponent(search)}`, { headers });
      expect(found.status).toBe(200);
      return ((await found.json()) as { id: number }[]).map((u) => u.id);
    };
    // Any signed-in user: by part of the name or username, never by any part of an email.
    expect(await ids('quiet pers', stranger.headers)).toContain(quiet.id);
    expect(await ids(`@${quiet.username.slice(0, -2)}`, stranger.headers)).toContain(quiet.id);
    expect(await ids(hidden, stranger.headers)).toEqual([]);
    expect(await ids(`q.person@${hidden}.example`, stranger.headers)).toEqual([]);
    expect(await ids('q.person@', stranger.headers)).toEqual([]);
    // An administrator: the whole address, in any case, but still not a part of it.
    expect(await ids(`Q.Person@${hidden.toUpperCase()}.example`, ADMIN)).toEqual([quiet.id]);
    expect(await ids(hidden, ADMIN)).toEqual([]);
  });

  it('paginates the user list', async () => {
    const res = await call('/api/v4/users?per_page=1&page=1', { headers: ADMIN });
    expect(res.headers.get('x-per-page')).toBe('1');
    expect(res.headers.get('link')).toContain('rel="first"');
    expect((await res.json()) as unknown[]).toHaveLength(1);
    expect((await call('/api/v4/users?per_page=0', { headers: ADMIN })).status).toBe(400);
    // GitLab caps per_page at 100 rather than refusing more.
    const capped = await call('/api/v4/users?per_page=101', { headers: ADMIN });
    expect(capped.status).toBe(200);
    expect(capped.headers.get('x-per-page')).toBe('100');
  });

  it('limits read_api tokens to reads', async () => {
    const reader = await createUser('reader', { scopes: ['read_api'] });
    expect((await call('/api/v4/user', { headers: reader.headers })).status).toBe(200);
    const write = await call('/api/v4/users', jsonBody({ username: unique('w'), name: 'W', password: 'long-enough' }, reader.headers));
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ error: 'insufficient_scope' });
  });
});

describe('usernames share the top-level namespace with groups', () => {
  it('refuses a username that is a reserved word or an existing group path', async () => {
    const owner = await createUser('owner');
    const path = unique('team');
    const group = await call('/api/v4/groups', jsonBody({ name: 'Team', path }, owner.headers));
    expect(group.status).toBe(201);
    for (const username of [path.toUpperCase(), 'api', 'Users']) {
      const res = await call('/api/v4/users', jsonBody({ username, name: 'Clash', password: 'long-enough' }, ADMIN));
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({ message: 'Username has already been taken' });
    }
  });
  it('gives a name to exactly one of a user and a top-level group created at once (10 rounds)', async () => {
    const owner = await createUser('owner');
    for (let round = 0; round < 10; round++) {
      const name = unique('clash');
      const [user, group] = await Promise.all([
        call('/api/v4/users', jsonBody({ username: round % 2 ? name : name.toUpperCase(), name: 'Clash', password: 'long-enough' }, ADMIN)),
        call('/api/v4/groups', jsonBody({ name: 'Clash', path: round % 2 ? name.toUpperCase() : name }, owner.headers)),
      ]);
      expect([user.status, group.status].sort()).toEqual(user.status === 201 ? [201, 400] : [201, 409]);
      // Only the winner holds the name: a user who lost cannot sign in by it.
      const signIn = await new Browser().signIn({ username: name, password: 'long-enough' });
      expect(signIn.status).toBe(user.status === 201 ? 303 : 401);
    }
  });
});
