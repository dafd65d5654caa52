// Set-up before anything is measured: Knock's users, OAuth application, signed-in browsers,
// tokens, projects and seeded access requests; the peer's client and grants. Every step uses
// the public HTTP API or pages, except bulk seeding, which goes through the seeder Worker
// (Knock's own Durable Object methods and token store).
import { Browser, call, formFields } from './http.mjs';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
export const PASSWORD = 'bench-password-1';

/** Runs `work` over `items` with at most `limit` in flight. */
export const inPool = async (items, limit, work) => {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i], i);
      }
    }),
  );
  return out;
};

const codeFrom = (location) => {
  const url = new URL(location);
  const code = url.searchParams.get('code');
  if (!code) throw new Error(`no code in redirect ${location}`);
  return code;
};

// ---------------------------------------------------------------- Knock

export async function createApplication(knock, adminToken) {
  const { json } = await call(`${knock}/api/v4/applications`, {
    method: 'POST',
    token: adminToken,
    body: { name: 'Bench client', redirect_uri: REDIRECT_URI, scopes: 'api', confidential: true },
    expect: 201,
  });
  return { clientId: json.application_id, secret: json.secret };
}

/** A user created through the admin API, signed in with a browser, who has consented once. */
export async function signedInUser(knock, adminToken, app, username) {
  await call(`${knock}/api/v4/users`, {
    method: 'POST',
    token: adminToken,
    body: { username, name: `Bench ${username}`, password: PASSWORD, email: `${username}@bench.test` },
    expect: 201,
  });
  const browser = new Browser(knock);
  const signIn = await browser.request('/users/sign_in');
  const signedIn = await browser.request('/users/sign_in', {
    method: 'POST',
    form: { ...formFields(signIn.text), username, password: PASSWORD },
  });
  if (signedIn.status !== 303) throw new Error(`sign-in of ${username} → ${signedIn.status}`);
  const consent = await browser.request(authorizePath(app));
  if (consent.status !== 200) throw new Error(`authorize for ${username} → ${consent.status} ${consent.location ?? ''}`);
  const approved = await browser.request('/login/oauth/authorize', {
    method: 'POST',
    form: { ...formFields(consent.text), decision: 'authorize' },
  });
  if (approved.status !== 303) throw new Error(`consent of ${username} → ${approved.status} ${approved.text.slice(0, 200)}`);
  return { username, browser, firstCode: codeFrom(approved.location) };
}

export const authorizePath = (app, state = 'bench') =>
  `/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api', state })}`;

/** A code straight from a remembered consent (302, no page). */
export async function nextCode(user, app) {
  const res = await user.browser.request(authorizePath(app));
  if (res.status !== 302) throw new Error(`authorize (remembered consent) → ${res.status}`);
  return codeFrom(res.location);
}

export const exchangeForm = (app, code) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT_URI,
  client_id: app.clientId,
  client_secret: app.secret,
});

export const refreshForm = (app, refreshToken) => ({
  grant_type: 'refresh_token',
  refresh_token: refreshToken,
  client_id: app.clientId,
  client_secret: app.secret,
});

export async function exchange(origin, tokenPath, app, code) {
  const { json } = await call(`${origin}${tokenPath}`, { method: 'POST', form: exchangeForm(app, code), expect: 200 });
  return json;
}

/**
 * A user with an OAuth access token of `app`, as the extension holds one (authorization code
 * flow through the pages): { id, username, token }.
 */
export async function oauthUser(knock, adminToken, app, username) {
  const user = await signedInUser(knock, adminToken, app, username);
  const { access_token: token } = await exchange(knock, '/login/oauth/access_token', app, user.firstCode);
  const { json } = await call(`${knock}/api/v4/user`, { headers: { authorization: `Bearer ${token}` }, expect: 200 });
  return { id: json.id, username, token };
}

export async function impersonationToken(knock, adminToken, userId) {
  const { json } = await call(`${knock}/api/v4/users/${userId}/impersonation_tokens`, {
    method: 'POST',
    token: adminToken,
    body: { name: 'bench', scopes: ['api'] },
    expect: 201,
  });
  return json.token;
}

export async function createProject(knock, token, path) {
  const { json } = await call(`${knock}/api/v4/projects`, {
    method: 'POST',
    token,
    body: { name: path, path, visibility: 'public', request_access_enabled: true },
    expect: 201,
  });
  return json.id;
}

/** Users straight into the Directory (and optionally tokens into KV), through the seeder. */
export async function seedUsers(seeder, prefix, from, count, { tokens = false } = {}) {
  const { json } = await call(`${seeder}/users`, { method: 'POST', body: { prefix, from, count, tokens }, expect: 200 });
  return json;
}

export async function seedAccessRequests(seeder, namespaceId, ownerId, userIds, kind = 'project') {
  await call(`${seeder}/access_requests`, { method: 'POST', body: { kind, namespaceId, ownerId, userIds }, expect: 200 });
}

/**
 * `sizes` = { projectId: pendingCount }: the largest count of users is created in batches, and
 * each batch asks for access to every project that still needs requesters, as it arrives.
 */
export async function seedPending(seeder, ownerId, sizes, { batch = 1000, inFlight = 2, onProgress } = {}) {
  const total = Math.max(...Object.values(sizes));
  const starts = Array.from({ length: Math.ceil(total / batch) }, (_, i) => i * batch);
  let done = 0;
  await inPool(starts, inFlight, async (from) => {
    const users = await seedUsers(seeder, 'pending', from, Math.min(batch, total - from));
    for (const [projectId, size] of Object.entries(sizes)) {
      const ids = users.filter((_, i) => from + i < size).map((u) => u.id);
      if (ids.length) await seedAccessRequests(seeder, Number(projectId), ownerId, ids);
    }
    done += users.length;
    onProgress?.(done, total);
  });
}

// ---------------------------------------------------------------- peer

export async function registerPeerClient(peer) {
  const { json } = await call(`${peer}/register`, {
    method: 'POST',
    body: {
      client_name: 'Bench client',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'api',
    },
    expect: 201,
  });
  return { clientId: json.client_id, secret: json.client_secret };
}

export async function peerCode(peer, app, username) {
  const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, scope: 'api', state: 'bench', login_hint: username });
  const res = await call(`${peer}/authorize?${query}`, { expect: 302 });
  return codeFrom(res.headers.get('location'));
}
