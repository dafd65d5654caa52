// Demo data for `npm start`, created once through the public API (so it exercises what it
// shows): alice owns the public group `acme` and its project `acme/website`; bob and carol have
// asked for access to both; grace is an instance administrator (the console's Admin area).
// Skipped when alice already exists.
import { randomBytes } from 'node:crypto';

const DEMO_USERS = [
  { username: 'alice', name: 'Alice Liddell' },
  { username: 'bob', name: 'Bob Builder' },
  { username: 'carol', name: 'Carol Danvers' },
  { username: 'grace', name: 'Grace Hopper', admin: true },
];

/**
 * @param {string} baseUrl e.g. http://127.0.0.1:8787
 * @param {string} adminToken the ADMIN_TOKEN of .dev.vars
 * @returns {Promise<{ users: { username: string, password: string, token?: string, note?: string }[], group?: object, project?: object }>}
 */
export async function seedDemo(baseUrl, adminToken) {
  const api = (token) => async (method, path, body) => {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const admin = api(adminToken);

  const existing = await admin('GET', '/users?username=alice');
  if (existing.length > 0) return { users: [] };

  const users = [];
  for (const u of DEMO_USERS) {
    const password = randomBytes(12).toString('base64url');
    const user = await admin('POST', '/users', { ...u, password, email: `${u.username}@example.com` });
    const { token } = await admin('POST', `/users/${user.id}/impersonation_tokens`, { name: 'demo', scopes: ['api'] });
    users.push({ id: user.id, username: u.username, password, token, note: `token ${token}${u.admin ? '   (administrator)' : ''}` });
  }
  const [alice, bob, carol] = users.map((u) => api(u.token));

  const group = await alice('POST', '/groups', { name: 'Acme', path: 'acme', visibility: 'public', description: 'Demo group' });
  const project = await alice('POST', '/projects', {
    name: 'Website',
    path: 'website',
    namespace_id: group.id,
    visibility: 'public',
    description: 'Demo project',
  });
  for (const requester of [bob, carol]) {
    await requester('POST', `/groups/${group.id}/access_requests`);
    await requester('POST', `/projects/${project.id}/access_requests`);
  }
  return {
    users: users.map(({ username, password, token, note }) => ({ username, password, token, note })),
    group: { id: group.id, full_path: group.full_path },
    project: { id: project.id, path_with_namespace: project.path_with_namespace },
  };
}

/**
 * The saved demo accounts that can still sign in (a blocked, deactivated or deleted one cannot),
 * as the administrator sees them now.
 * @template {{ username: string }} T
 * @param {string} baseUrl
 * @param {string} adminToken
 * @param {T[]} accounts
 * @returns {Promise<T[]>}
 */
export async function activeAccounts(baseUrl, adminToken, accounts) {
  const active = await Promise.all(
    accounts.map(async (account) => {
      const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v4/users?username=${encodeURIComponent(account.username)}`, {
        headers: { 'PRIVATE-TOKEN': adminToken },
      });
      if (!res.ok) throw new Error(`GET /users?username=${account.username}: ${res.status} ${await res.text()}`);
      const [user] = /** @type {{ state: string }[]} */ (await res.json());
      return user?.state === 'active';
    }),
  );
  return accounts.filter((_, i) => active[i]);
}
