import { describe, expect, it } from 'vitest';
import { ADMIN, call, jsonBody } from './support/http';
import { authorizeCode, exchange, registerApp, signedIn, whoAmI, type User } from './support/oauth';

/** The user as the Directory holds it, read by an administrator. */
const fromDirectory = async (user: { id: number }) => {
  const res = await call(`/api/v4/users/${user.id}`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

const me = async (headers: Record<string, string>) => {
  const res = await call('/api/v4/user', { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

describe('GET /api/v4/user', () => {
  it('answers an OAuth access token with the same profile the Directory holds', async () => {
    const { user, browser } = await signedIn('whoami');
    const app = await registerApp();
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    const fromToken = (await (await whoAmI(tokens.access_token)).json()) as Record<string, unknown>;
    expect(fromToken).toEqual(await fromDirectory(user));
    expect(fromToken).toMatchObject({ id: user.id, username: user.username, email: `${user.username}@example.test`, state: 'active', is_admin: false });
    expect(fromToken.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('answers an impersonation token and the admin token with the full profile', async () => {
    const { user } = await signedIn('imp');
    const issued = await call(`/api/v4/users/${user.id}/impersonation_tokens`, jsonBody({ name: 'bench', scopes: ['api'] }, ADMIN));
    expect(issued.status).toBe(201);
    const { token } = (await issued.json()) as { token: string };
    expect(await me({ 'PRIVATE-TOKEN': token })).toEqual(await fromDirectory(user));

    const root = await me(ADMIN);
    const listed = (await (await call('/api/v4/users?username=root', { headers: ADMIN })).json()) as { id: number }[];
    const rootUser = (await (await call(`/api/v4/users/${listed[0].id}`, { headers: ADMIN })).json()) as Record<string, unknown>;
    expect(root).toMatchObject({ username: 'root', is_admin: true, state: 'active', created_at: rootUser.created_at });
    expect(root).toHaveProperty('email');
  });
});
