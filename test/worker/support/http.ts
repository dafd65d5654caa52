import { env, exports } from 'cloudflare:workers';
import { BROWSER_ACCEPT, rememberCookies } from '../../scripts/support/web-client.mjs';

export const ORIGIN = 'http://knock.test';
export const ADMIN = { 'PRIVATE-TOKEN': 'test-admin-token' };

/** Calls the Worker as a client would. */
export const call = (path: string, init: RequestInit = {}) => exports.default.fetch(`${ORIGIN}${path}`, init);

export const jsonBody = (body: unknown, headers: Record<string, string> = {}, method = 'POST'): RequestInit => ({
  method,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

let counter = 0;
/** A name unique within the test run. */
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

export interface TestUser {
  id: number;
  username: string;
  password: string;
  headers: Record<string, string>;
}

/** The API as `who` (a test user, or headers such as ADMIN): get, post, put and delete under /api/v4. */
export const api = (who: TestUser | Record<string, string>) => {
  const headers = 'headers' in who ? (who.headers as Record<string, string>) : (who as Record<string, string>);
  return {
    get: (path: string) => call(`/api/v4${path}`, { headers }),
    post: (path: string, body?: unknown) => call(`/api/v4${path}`, body === undefined ? { method: 'POST', headers } : jsonBody(body, headers)),
    put: (path: string, body?: unknown) => call(`/api/v4${path}`, body === undefined ? { method: 'PUT', headers } : jsonBody(body, headers, 'PUT')),
    delete: (path: string) => call(`/api/v4${path}`, { method: 'DELETE', headers }),
  };
};

/** Creates a user through the admin API and gives it an `api` access token. */
export const createUser = async (prefix = 'user', opts: { admin?: boolean; scopes?: string[] } = {}): Promise<TestUser> => {
  const username = unique(prefix);
  const password = `pw-${username}-secret`;
  const res = await call('/api/v4/users', jsonBody({ username, name: `User ${username}`, password, email: `${username}@example.test`, admin: opts.admin ?? false }, ADMIN));
  if (res.status !== 201) throw new Error(`createUser ${res.status}: ${await res.text()}`);
  const user = (await res.json()) as { id: number; username: string };
  const token = await issueToken(user.id, username, opts.scopes ?? ['api']);
  return { id: user.id, username, password, headers: { 'PRIVATE-TOKEN': token } };
};

/** An access token for a user, issued as an administrator would: an impersonation token. */
export const issueToken = async (userId: number, username: string, scopes: string[]): Promise<string> => {
  const res = await call(`/api/v4/users/${userId}/impersonation_tokens`, jsonBody({ name: `test token for ${username}`, scopes }, ADMIN));
  if (res.status !== 201) throw new Error(`issueToken ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
};

/** A tiny browser: keeps cookies, sends Origin on form posts, never follows redirects. */
export class Browser {
  readonly cookies = new Map<string, string>();
  /** How requests reach the Worker; a test may route one through a recording env (counted.ts). */
  fetcher: (path: string, init: RequestInit) => Promise<Response> = call;
  /**
   * Each browser signs in from its own address, so per-address throttling stays per test: 64
   * random bits in the documentation prefix (RFC 3849), where a test that throttles its browser's
   * address (ten failed sign-ins) meets no other test's browser. (Random IPv4 octets could collide: CI once met one.)
   */
  readonly address = `2001:db8:${[...crypto.getRandomValues(new Uint16Array(4))].map((n) => n.toString(16)).join(':')}`;

  async get(path: string, headers: Record<string, string> = {}) {
    return this.record(
      await this.fetcher(path, { headers: { 'CF-Connecting-IP': this.address, Accept: BROWSER_ACCEPT, ...headers, Cookie: this.cookieHeader() }, redirect: 'manual' }),
    );
  }

  /** Posts a form; a field given as an array is sent once per value (checkboxes of one name). */
  async post(path: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    return this.record(
      await this.fetcher(path, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: BROWSER_ACCEPT,
          Origin: ORIGIN,
          'CF-Connecting-IP': this.address,
          Cookie: this.cookieHeader(),
          ...headers,
        },
        body: new URLSearchParams(Object.entries(form).flatMap(([name, value]) => [value].flat().map((v) => [name, v]))).toString(),
      }),
    );
  }

  /** The authenticity_token of the form in a page. */
  static csrf(html: string): string {
    const m = /name="authenticity_token" value="([^"]+)"/.exec(html);
    if (!m) throw new Error('no authenticity_token in page');
    return m[1];
  }

  async signIn(user: { username: string; password: string }, returnTo = '/') {
    const page = await this.get(`/users/sign_in?return_to=${encodeURIComponent(returnTo)}`);
    const token = Browser.csrf(await page.text());
    return this.post('/users/sign_in', { username: user.username, password: user.password, authenticity_token: token, return_to: returnTo });
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** Keeps the cookies a response sets (a cookie cleared by Max-Age=0 or an empty value is removed); answers the response. */
  private record(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1);
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}
