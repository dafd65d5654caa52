// Helpers for the token service tests: a tiny cookie-keeping browser, registered applications,
// PKCE pairs and the authorization-code flow through the real pages.
import { expect } from 'vitest';

import { ADMIN, Browser, call, ORIGIN, unique } from './http';

export { ADMIN, call, ORIGIN, unique };

export interface User {
  id: number;
  username: string;
  password: string;
}

export const createUser = async (prefix = 'oauth'): Promise<User> => {
  const username = unique(prefix);
  const password = `pw-${username}-secret`;
  const res = await call('/api/v4/users', {
    method: 'POST',
    headers: { ...ADMIN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, name: `Name ${username}`, password, email: `${username}@example.test` }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: number };
  return { id, username, password };
};

export interface App {
  id: number;
  clientId: string;
  secret: string | null;
  name: string;
  redirectUri: string;
}

export const registerApp = async (opts: { confidential?: boolean; redirectUris?: string[]; scopes?: string } = {}): Promise<App> => {
  const name = unique('App ');
  const redirectUris = opts.redirectUris ?? [`https://${unique('client')}.example/callback`];
  const res = await call('/api/v4/applications', {
    method: 'POST',
    headers: { ...ADMIN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, redirect_uri: redirectUris.join(' '), scopes: opts.scopes ?? 'api read_api', confidential: opts.confidential ?? true }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: number; application_id: string; secret: string | null };
  return { id: body.id, clientId: body.application_id, secret: body.secret, name, redirectUri: redirectUris[0] };
};

const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

export const pkcePair = async () => {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
};

export { Browser };
export const csrfOf = Browser.csrf;

/** The hidden fields of the consent form, as a browser would submit them. */
export const consentFields = (html: string): Record<string, string> => {
  const form = /<form method="post" action="\/login\/oauth\/authorize">([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error('no consent form in page');
  const fields: Record<string, string> = {};
  for (const m of form[1].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]] = decodeEntities(m[2]);
  return fields;
};

const decodeEntities = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export const authorizePath = (params: Record<string, string | undefined>) => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return `/login/oauth/authorize?${q}`;
};

/** Query parameters of a redirect's Location. */
export const locationParams = (res: Response) => new URL(res.headers.get('Location') ?? 'about:blank').searchParams;

/**
 * Runs authorize → consent → Authorize for a signed-in browser and returns the code (or the
 * immediate redirect when consent is remembered).
 */
export const authorizeCode = async (
  browser: Browser,
  app: App,
  extra: Record<string, string | undefined> = {},
): Promise<{ code: string; state: string }> => {
  const state = unique('state');
  const res = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state, ...extra }));
  let answer = res;
  if (res.status === 200) {
    const html = await res.text();
    answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
  }
  expect([302, 303]).toContain(answer.status);
  const params = locationParams(answer);
  expect(params.get('state')).toBe(state);
  const code = params.get('code');
  if (!code) throw new Error(`no code: ${answer.headers.get('Location')}`);
  return { code, state };
};

/** A signed-in user with a fresh browser. */
export const signedIn = async (prefix = 'oauth') => {
  const user = await createUser(prefix);
  const browser = new Browser();
  expect((await browser.signIn(user)).status).toBe(303);
  return { user, browser };
};

export const tokenCall = (body: Record<string, string>, opts: { form?: boolean; basic?: [string, string]; path?: string } = {}) => {
  const headers: Record<string, string> = { 'Content-Type': opts.form ? 'application/x-www-form-urlencoded' : 'application/json' };
  if (opts.basic) {
    const enc = (s: string) => encodeURIComponent(s);
    headers.Authorization = `Basic ${btoa(`${enc(opts.basic[0])}:${enc(opts.basic[1])}`)}`;
  }
  return call(opts.path ?? '/login/oauth/access_token', {
    method: 'POST',
    headers,
    body: opts.form ? new URLSearchParams(body).toString() : JSON.stringify(body),
  });
};

export interface Tokens {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
  created_at: number;
}

/** The exchange as GitLab's clients send it: JSON with client_id, client_secret, code and the authorization request's redirect_uri. */
export const exchange = async (app: App, code: string, extra: Record<string, string> = {}): Promise<Tokens> => {
  const res = await tokenCall({ client_id: app.clientId, ...(app.secret ? { client_secret: app.secret } : {}), code, redirect_uri: app.redirectUri, ...extra });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Tokens;
};

export const refresh = (app: App, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenCall({ client_id: app.clientId, ...(app.secret ? { client_secret: app.secret } : {}), grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });

/** Calls the API as the token's holder. */
export const whoAmI = (token: string, how: 'bearer' | 'private' = 'bearer') =>
  call('/api/v4/user', { headers: how === 'bearer' ? { Authorization: `Bearer ${token}` } : { 'PRIVATE-TOKEN': token } });
