import { env } from 'cloudflare:workers';
import { accessTokenRecord, hashSecret, newAccessToken, putAccessToken, revokeAccessTokens } from '../../../worker/store/tokens';
import { ADMIN, Browser, call, createUser, issueToken, jsonBody, unique, type TestUser } from './http';

/** The kinds of credentials a hostile client may present on /api/v4. */
export const TOKEN_KINDS = ['none', 'garbage', 'empty-bearer', 'expired', 'revoked', 'read_api', 'api', 'bearer-api', 'admin', 'long'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface OAuthApp {
  id: number;
  clientId: string;
  secret: string;
  redirectUris: string[];
}

/** Registers a confidential OAuth application through the admin API. */
export const registerApp = async (redirectUris: string[], opts: { confidential?: boolean; scopes?: string } = {}): Promise<OAuthApp> => {
  const res = await call(
    '/api/v4/applications',
    jsonBody({ name: unique('app'), redirect_uri: redirectUris.join(' '), scopes: opts.scopes ?? 'api read_api', confidential: opts.confidential ?? true }, ADMIN),
  );
  if (res.status !== 201) throw new Error(`registerApp ${res.status}: ${await res.text()}`);
  const app = (await res.json()) as { id: number; application_id: string; secret: string };
  return { id: app.id, clientId: app.application_id, secret: app.secret, redirectUris };
};

/** A token that was valid and has expired, and one that was revoked. */
export const expiredToken = async (user: TestUser): Promise<string> => {
  const now = Math.floor(Date.now() / 1000);
  const token = newAccessToken(now - 60);
  const profile = { id: user.id, username: user.username, name: user.username, admin: false, email: null, created_at: new Date().toISOString(), two_factor_enabled: false };
  await putAccessToken(env, await hashSecret(env, token), accessTokenRecord(profile, { scopes: ['api'], clientId: null, grantId: null, tokenId: null, createdAt: now - 3600, expiresAt: now - 60 }));
  return token;
};

export const revokedToken = async (user: TestUser): Promise<string> => {
  const token = await issueToken(user.id, user.username, ['api']);
  await revokeAccessTokens(env, [{ hash: await hashSecret(env, token), expiresAt: Math.floor(Date.now() / 1000) + 3600 }]);
  return token;
};

export interface Credentials {
  user: TestUser;
  tokens: Record<TokenKind, Record<string, string>>;
}

/** One user with every kind of credential, for fuzzing authentication. */
export const credentialsFor = async (prefix: string): Promise<Credentials> => {
  const user = await createUser(prefix);
  const token = user.headers['PRIVATE-TOKEN'];
  return {
    user,
    tokens: {
      none: {},
      garbage: { 'PRIVATE-TOKEN': 'knock_at_zzz_garbage' },
      'empty-bearer': { Authorization: 'Bearer ' },
      expired: { 'PRIVATE-TOKEN': await expiredToken(user) },
      revoked: { Authorization: `Bearer ${await revokedToken(user)}` },
      read_api: { 'PRIVATE-TOKEN': await issueToken(user.id, user.username, ['read_api']) },
      api: { 'PRIVATE-TOKEN': token },
      'bearer-api': { Authorization: `Bearer ${token}` },
      admin: ADMIN,
      long: { 'PRIVATE-TOKEN': 'x'.repeat(8000) },
    },
  };
};

/** A browser signed in as `user`, with the CSRF token its pages carry. */
export const signedInBrowser = async (user: TestUser): Promise<{ browser: Browser; csrf: string }> => {
  const browser = new Browser();
  const res = await browser.signIn(user);
  if (res.status !== 303) throw new Error(`sign-in ${res.status}`);
  const home = await browser.get('/');
  return { browser, csrf: Browser.csrf(await home.text()) };
};

/**
 * A user without a password, made straight in the Directory (no PBKDF2: fast enough to make
 * hundreds), with an `api` token. For tests that need many requesters, not sign-ins.
 */
export const quickUser = async (prefix = 'q', opts: { admin?: boolean; scopes?: string[] } = {}): Promise<TestUser> => {
  const username = unique(prefix);
  const created = (await env.DIRECTORY.getByName('directory').createUser({ username, name: `User ${username}`, admin: opts.admin ?? false })) as unknown as {
    ok: boolean;
    value: { id: number };
  };
  if (!created.ok) throw new Error(`quickUser ${username}: ${JSON.stringify(created)}`);
  const token = await issueToken(created.value.id, username, opts.scopes ?? ['api']);
  return { id: created.value.id, username, password: '', headers: { 'PRIVATE-TOKEN': token } };
};
