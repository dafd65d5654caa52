// "Sign in with Knock" in front of Apache httpd: Debian's mod_auth_openidc, unmodified, protects
// a page with `Require claim groups:<group>` (docs/examples/apache-knock/httpd.conf, the file the
// README's tour runs). bob is refused; he asks for the group and alice approves; his next sign-in
// passes and the page greets him; alice removes him, Knock's back-channel logout ends his Apache
// session, and his next request goes back to Knock and is refused. bob's browser is plain HTTP
// with one cookie jar (both servers are on 127.0.0.1), following redirects as a browser does.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { freePort } from '../../worker/dev/server.mjs';
// @ts-expect-error: plain ESM module without types
import { api, BROWSER_ACCEPT, consentFields, csrfOf } from '../scripts/support/web-client.mjs';
import type { Api } from '../scripts/support/web-client.d.mts';
import { ROOT, sharedKnock } from './support/knock-server';
import { eventually } from './support/webhook-receiver';

const APACHE = process.env.APACHE2 ?? '/usr/sbin/apache2';
const CONFIG = join(ROOT, 'docs', 'examples', 'apache-knock', 'httpd.conf');
const SITE = join(ROOT, 'docs', 'examples', 'apache-knock', 'site');

/** What a request got back. */
interface Answer {
  status: number;
  location: string | null;
  body: string;
}

/**
 * A browser: one cookie jar for every origin on 127.0.0.1, redirects followed by hand. Requests go
 * through node:http, not fetch: fetch says `Sec-Fetch-Mode: cors`, which mod_auth_openidc answers
 * with 401 (a script's request) instead of sending it to sign in; a browser's navigation says
 * `navigate`.
 */
class Browser {
  readonly jar = new Map<string, string>();

  request(url: string, form?: Record<string, string>): Promise<Answer> {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const headers: Record<string, string> = {
      Accept: BROWSER_ACCEPT,
      'Sec-Fetch-Mode': 'navigate',
      'Sec-Fetch-Dest': 'document',
      Cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
      ...(body !== undefined && { 'Content-Type': 'application/x-www-form-urlencoded', Origin: new URL(url).origin, 'Content-Length': String(Buffer.byteLength(body)) }),
    };
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: form ? 'POST' : 'GET', headers, timeout: 20_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          for (const line of res.headers['set-cookie'] ?? []) {
            const [pair] = line.split(';');
            const eq = pair.indexOf('=');
            const name = pair.slice(0, eq).trim();
            const value = pair.slice(eq + 1);
            if (/max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.jar.delete(name);
            else this.jar.set(name, value);
          }
          resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, body: text });
        });
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
      req.end(body);
    });
  }

  /**
   * Opens `url` and goes where it leads, as a person would: Knock's sign-in page gets the
   * credentials, its consent page Authorize. Answers the last response and where it was.
   */
  async open(url: string, who: { username: string; password: string }): Promise<Answer & { url: string }> {
    let res = await this.request(url);
    for (let hops = 0; hops < 12; hops++) {
      if (res.status >= 300 && res.status < 400 && res.location) {
        url = new URL(res.location, url).href;
        res = await this.request(url);
        continue;
      }
      const page = new URL(url);
      if (res.status === 200 && page.pathname === '/users/sign_in') {
        res = await this.request(new URL('/users/sign_in', url).href, {
          username: who.username,
          password: who.password,
          authenticity_token: csrfOf(res.body),
          return_to: page.searchParams.get('return_to') ?? '/',
        });
      } else if (res.status === 200 && res.body.includes('action="/login/oauth/authorize"')) {
        res = await this.request(new URL('/login/oauth/authorize', url).href, { ...consentFields(res.body), authenticity_token: csrfOf(res.body), decision: 'authorize' });
      } else return { ...res, url };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Closes the browser's Apache session cookie (as quitting the browser does); Knock's session stays. */
  forgetApacheSession(): void {
    for (const name of this.jar.keys()) if (name.startsWith('mod_auth_openidc')) this.jar.delete(name);
  }
}

describe('Apache httpd with mod_auth_openidc, signing in with Knock', () => {
  const knock = sharedKnock();
  const admin: Api = api(() => knock.url, knock.adminToken);
  const state = mkdtempSync(join(tmpdir(), 'knock-apache-'));
  let apache: ChildProcess | null = null;
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
  });
  afterAll(() => {
    // Its own process group (detached), ended as one.
    if (apache?.pid && apache.exitCode === null) process.kill(-apache.pid, 'SIGTERM');
    rmSync(state, { recursive: true, force: true });
  });

  it.skipIf(!existsSync(APACHE))('refuses bob, lets him in once alice approves him, and closes the door when she removes him', async () => {
    // Names of their own: the server is shared with the run's other files.
    const suffix = randomBytes(4).toString('hex');
    const person = async (name: string) => {
      const username = `sso-${name}-${suffix}`;
      const password = `${username}-password-1`;
      const { id } = await admin('POST', '/users', { username, name, password }, 201);
      const { token } = await admin('POST', `/users/${id}/impersonation_tokens`, { name: 'e2e', scopes: ['api'] }, 201);
      return { id: id as number, username, password, api: api(() => knock.url, token) };
    };
    const [alice, bob] = [await person('alice'), await person('bob')];
    const group = await alice.api('POST', '/groups', { name: `Acme ${suffix}`, path: `acme-${suffix}`, visibility: 'public' }, 201);

    const site = `http://127.0.0.1:${port}`;
    const redirectUri = `${site}/protected/redirect_uri`;
    const app = await admin(
      'POST',
      '/applications',
      { name: 'Apache', redirect_uri: redirectUri, scopes: 'openid profile', backchannel_logout_uri: `${redirectUri}?logout=backchannel` },
      201,
    );

    apache = spawn(APACHE, ['-X', '-f', CONFIG], {
      detached: true,
      stdio: 'ignore',
      env: {
        ...process.env,
        KNOCK_URL: knock.url,
        CLIENT_ID: app.application_id,
        CLIENT_SECRET: app.secret,
        KNOCK_GROUP: group.full_path,
        APACHE_PORT: String(port),
        APACHE_STATE: state,
        SITE_ROOT: SITE,
        OIDC_PASSPHRASE: randomBytes(24).toString('base64url'),
      },
    });
    const errorLog = () => (existsSync(join(state, 'error.log')) ? readFileSync(join(state, 'error.log'), 'utf8') : '');
    await eventually('Apache to listen', () => fetch(`${site}/`).then(() => true, () => undefined), 15_000).catch((e) => {
      throw new Error(`${e}\n${errorLog()}`);
    });

    // bob signs in with Knock; he is not in the group, so Apache refuses him.
    const browser = new Browser();
    const refused = await browser.open(`${site}/protected/`, bob);
    expect(refused.status, errorLog()).toBe(401);
    expect(browser.jar.has('knock_session')).toBe(true);

    // He asks for access; alice approves. His next sign-in passes, and the page greets him.
    await bob.api('POST', `/groups/${group.id}/access_requests`, undefined, 201);
    await alice.api('PUT', `/groups/${group.id}/access_requests/${bob.id}/approve`, { access_level: 30 }, 201);
    browser.forgetApacheSession();
    const welcomed = await browser.open(`${site}/protected/`, bob);
    expect(welcomed.status, errorLog()).toBe(200);
    expect(welcomed.body).toContain(`Hello ${bob.username}!`);
    expect((await browser.request(`${site}/protected/`)).status).toBe(200);

    // alice removes him: Knock's back-channel logout ends his Apache session.
    await alice.api('DELETE', `/groups/${group.id}/members/${bob.id}`, undefined, 204);
    const sentBack = await eventually('Apache to send bob back to Knock', async () => {
      const res = await browser.request(`${site}/protected/`);
      return res.status === 302 ? res.location : undefined;
    });
    expect(sentBack).toMatch(new RegExp(`^${knock.url}/oauth/authorize\\?`));
    const deliveries = await admin('GET', `/applications/${app.id}/logout_deliveries`, undefined, 200);
    expect(deliveries, errorLog()).toMatchObject([{ user_id: bob.id, reason: 'membership_ended', response_status: 200, error: null }]);

    // His next request goes back to Knock, which signs him in at once, and Apache refuses him.
    const again = await browser.open(`${site}/protected/`, bob);
    expect(again.status).toBe(401);
  });
});
