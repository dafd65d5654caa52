// "Sign in with Knock" in front of Apache httpd: Debian's mod_auth_openidc, unmodified, protects
// a page with `Require claim groups:<group>` (docs/examples/apache-knock/httpd.conf, the file the
// README's tour runs). bob is refused; he asks for the group and alice approves; his next sign-in
// passes and the page greets him; alice removes him, Knock's back-channel logout ends his Apache
// session, and his next request goes back to Knock and is refused. bob's browser is plain HTTP
// (support/navigating-browser.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { freePort } from '../../worker/dev/server.mjs';
import { api } from '../scripts/support/web-client.mjs';
import type { Api } from '../scripts/support/web-client.d.mts';
import { ROOT, sharedKnock } from './support/knock-server';
import { NavigatingBrowser as Browser } from './support/navigating-browser';
import { eventually } from './support/webhook-receiver';

const APACHE = process.env.APACHE2 ?? '/usr/sbin/apache2';
const CONFIG = join(ROOT, 'docs', 'examples', 'apache-knock', 'httpd.conf');
const SITE = join(ROOT, 'docs', 'examples', 'apache-knock', 'site');

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
