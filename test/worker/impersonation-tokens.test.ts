import { describe, expect, it } from 'vitest';
import { ADMIN, call, createUser, jsonBody, unique } from './support/http';

const ISO_DATE = /^\d{4}-\d\d-\d\d$/;

const issue = async (userId: number, body: Record<string, unknown> = { name: 'script', scopes: ['api'] }) => {
  const res = await call(`/api/v4/users/${userId}/impersonation_tokens`, jsonBody(body, ADMIN));
  expect(res.status).toBe(201);
  return (await res.json()) as { id: number; token: string; name: string; active: boolean };
};

/** A user with no token yet (createUser gives each test user one). */
const tokenless = async (prefix: string) => {
  const username = unique(prefix);
  const res = await call('/api/v4/users', jsonBody({ username, name: username, password: `pw-${username}-secret` }, ADMIN));
  expect(res.status).toBe(201);
  return (await res.json()) as { id: number };
};

const whoAmI = (token: string) => call('/api/v4/user', { headers: { 'PRIVATE-TOKEN': token } });

describe('impersonation tokens (GitLab: /users/:id/impersonation_tokens)', () => {
  it('are issued with an id, listed without the token, and found by id', async () => {
    const user = await tokenless('imp');
    const issued = await issue(user.id, { name: 'deploy bot', scopes: ['read_api'] });
    expect(issued).toMatchObject({ id: expect.any(Number), name: 'deploy bot', active: true, impersonation: true, revoked: false, user_id: user.id, scopes: ['read_api'] });
    expect(issued.token).toMatch(/^knock_at_/);

    const listed = await call(`/api/v4/users/${user.id}/impersonation_tokens`, { headers: ADMIN });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('X-Total')).toBe('1');
    const [entry] = (await listed.json()) as Record<string, unknown>[];
    expect(entry).toEqual({ ...issued, token: undefined, expires_at: expect.stringMatching(ISO_DATE) });
    expect(entry).not.toHaveProperty('token');

    const one = await call(`/api/v4/users/${user.id}/impersonation_tokens/${issued.id}`, { headers: ADMIN });
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(entry);
  });

  it('can be revoked, and then stop working at once', async () => {
    const user = await tokenless('rev');
    const kept = await issue(user.id);
    const revoked = await issue(user.id);
    expect((await whoAmI(revoked.token)).status).toBe(200);

    const res = await call(`/api/v4/users/${user.id}/impersonation_tokens/${revoked.id}`, { method: 'DELETE', headers: ADMIN });
    expect(res.status).toBe(204);
    const after = await whoAmI(revoked.token);
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: 'invalid_token', error_description: expect.stringMatching(/revoked/) });
    expect((await whoAmI(kept.token)).status).toBe(200);

    const state = async (s: string) =>
      ((await (await call(`/api/v4/users/${user.id}/impersonation_tokens?state=${s}`, { headers: ADMIN })).json()) as { id: number; revoked: boolean; active: boolean }[]);
    expect((await state('active')).map((t) => t.id)).toEqual([kept.id]);
    expect(await state('inactive')).toEqual([expect.objectContaining({ id: revoked.id, revoked: true, active: false })]);
    expect((await state('all')).map((t) => t.id)).toEqual([revoked.id, kept.id]);

    // Revoking again changes nothing; the token stays revoked.
    expect((await call(`/api/v4/users/${user.id}/impersonation_tokens/${revoked.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    expect((await whoAmI(revoked.token)).status).toBe(401);
  });

  it("are only an administrator's, and only reachable under their own user", async () => {
    const [owner, other] = await Promise.all([createUser('own'), createUser('oth')]);
    const token = await issue(owner.id);
    for (const [method, path] of [
      ['GET', `/api/v4/users/${owner.id}/impersonation_tokens`],
      ['GET', `/api/v4/users/${owner.id}/impersonation_tokens/${token.id}`],
      ['DELETE', `/api/v4/users/${owner.id}/impersonation_tokens/${token.id}`],
    ]) {
      expect((await call(path, { method, headers: owner.headers })).status).toBe(403);
    }
    const elsewhere = await call(`/api/v4/users/${other.id}/impersonation_tokens/${token.id}`, { method: 'DELETE', headers: ADMIN });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ message: '404 Impersonation Token Not Found' });
    expect((await whoAmI(token.token)).status).toBe(200);
    const missing = await call(`/api/v4/users/${owner.id}/impersonation_tokens/999999`, { headers: ADMIN });
    expect(missing.status).toBe(404);
    expect((await call(`/api/v4/users/${owner.id}/impersonation_tokens?state=expired`, { headers: ADMIN })).status).toBe(400);
  });

  // GitLab's lib/api/users.rb finds the user before its impersonation tokens: `404 User Not Found`.
  it('answer 404 User Not Found for a user that does not exist, on every route', async () => {
    const someone = await createUser('tok');
    const token = await issue(someone.id);
    for (const [method, path] of [
      ['GET', '/api/v4/users/999999999/impersonation_tokens'],
      ['GET', `/api/v4/users/999999999/impersonation_tokens/${token.id}`],
      ['DELETE', `/api/v4/users/999999999/impersonation_tokens/${token.id}`],
      ['POST', '/api/v4/users/999999999/impersonation_tokens'],
    ]) {
      const init = method === 'POST' ? jsonBody({ name: 'x', scopes: ['api'] }, ADMIN) : { method, headers: ADMIN };
      const res = await call(path, init);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ message: '404 User Not Found' });
    }
    expect((await whoAmI(token.token)).status).toBe(200);
  });
});

describe("GitLab's documented form bodies", () => {
  it('take scopes[] form-encoded, once or repeated, for impersonation and personal access tokens', async () => {
    const user = await createUser('form');
    const form = (body: string, headers: Record<string, string>) => ({ method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
    const impersonation = await call(`/api/v4/users/${user.id}/impersonation_tokens`, form('name=ci&scopes[]=api', ADMIN));
    expect(impersonation.status).toBe(201);
    expect(await impersonation.json()).toMatchObject({ name: 'ci', scopes: ['api'] });
    const personal = await call('/api/v4/user/personal_access_tokens', form('name=script&scopes%5B%5D=read_api&scopes%5B%5D=read_user', user.headers));
    expect(personal.status).toBe(201);
    expect(await personal.json()).toMatchObject({ name: 'script', scopes: ['read_api', 'read_user'] });
    const unknown = await call('/api/v4/user/personal_access_tokens', form('name=script&scopes[]=sudo', user.headers));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: 'scopes does not have a valid value' });
  });
});

describe('paths that only look like the OpenAPI document', () => {
  it('serve the document without a token at /api/v4/openapi.json only', async () => {
    expect((await call('/api/v4/openapi.json')).status).toBe(200);
    for (const kind of ['groups', 'projects']) {
      const anonymous = await call(`/api/v4/${kind}/openapi.json`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ message: '401 Unauthorized' });
      const signedIn = await call(`/api/v4/${kind}/openapi.json`, { headers: ADMIN });
      expect(signedIn.status).toBe(404);
      expect(await signedIn.json()).toEqual({ message: `404 ${kind === 'groups' ? 'Group' : 'Project'} Not Found` });
    }
  });
});
