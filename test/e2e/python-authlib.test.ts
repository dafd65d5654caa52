import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoUser } from './support/demo';
import { ROOT, callApi, startKnock, type RunningServer } from './support/knock-server';

// Debian's python3-authlib as a relying party, run by the system interpreter (or PYTHON), as
// python-gitlab.test.ts runs python-gitlab: `.ci/run` installs it when `import authlib` fails.
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const SCRIPT = join(ROOT, 'test', 'e2e', 'support', 'python_authlib_flow.py');
const REDIRECT_URI = 'http://127.0.0.1/callback';

describe('python3-authlib against Knock', () => {
  const state = mkdtempSync(join(tmpdir(), 'knock-authlib-'));
  let server: RunningServer;
  let alice: DemoUser;
  let bob: DemoUser;

  beforeAll(async () => {
    server = await startKnock(state);
    ({ alice, bob } = await seedDemo(server));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('signs bob in with the code flow, PKCE and a nonce, validates the id_token itself, reads userinfo and refreshes', async () => {
    const app = await callApi<{ application_id: string; secret: string }>(server, server.adminToken, 'POST', '/applications', 201, {
      name: 'authlib',
      redirect_uri: REDIRECT_URI,
      scopes: 'openid profile email',
    });
    // bob is let into acme, which the demo data has him asking for.
    const me = await callApi<{ id: number }>(server, bob.token, 'GET', '/user', 200);
    await callApi(server, alice.token, 'PUT', `/groups/acme/access_requests/${me.id}/approve`, 201, { access_level: 40 });

    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT], {
      env: {
        ...process.env,
        KNOCK_URL: server.url,
        CLIENT_ID: app.application_id,
        CLIENT_SECRET: app.secret,
        REDIRECT_URI,
        KNOCK_USERNAME: bob.username,
        KNOCK_PASSWORD: bob.password,
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      },
      timeout: 90_000,
    });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    expect(seen.authlib).toMatch(/^1\./);
    expect(seen.issuer).toBe(server.url);
    expect(seen.callback).toMatchObject({ iss: server.url });
    expect(seen.state_matches).toBe(true);
    expect(seen.id_token).toEqual({
      sub: String(me.id),
      nonce: expect.any(String),
      preferred_username: 'bob',
      email: 'bob@example.com',
      email_verified: false,
      groups_direct: ['acme'],
    });
    expect(seen.userinfo).toMatchObject({
      sub: String(me.id),
      preferred_username: 'bob',
      groups: ['acme'],
      'https://gitlab.org/claims/groups/maintainer': ['acme'],
    });
    expect(seen.tampered).toBe('BadSignatureError');
    expect(seen.refreshed).toEqual({ same_sub: true, nonce: null, groups_direct: ['acme'] });
  });
});
