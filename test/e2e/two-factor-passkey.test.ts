// End to end: alice registers a passkey on her account's two-factor page in Debian's Chromium,
// with the DevTools protocol's virtual authenticator (a platform authenticator with resident keys
// and user verification), then signs in with her password and the passkey, and with the passkey alone. axe checks the
// two-factor page (with the recovery codes) and the sign-in's second step.
//
// Its own server, not the shared one: a passkey is bound to its RP ID, the host of PUBLIC_URL
// (worker/services/two-factor.ts), and browsers refuse an IP address as one ("This is an invalid
// domain"), so this server's PUBLIC_URL is http://localhost:<port>, which is a secure context.

import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_TEST_VARS } from '../scripts/support/server-vars';
import { launchPlain } from './support/chromium';
import { ConsoleVisits } from './support/console-visits';
import { callApi, createUser, type KnockAddress } from './support/knock-server';
// @ts-expect-error: plain ESM module without types
import { freePort, startServer } from '../../worker/dev/server.mjs';

const alice = { username: 'alice', password: 'alice-password-1', name: 'Alice Passkey' };

describe('a passkey as the second factor, in Chromium', () => {
  const state = mkdtempSync(join(tmpdir(), 'knock-passkey-'));
  let server: { url: string; stop(): Promise<void> } | undefined;
  let knock: KnockAddress;
  let browser: Browser | undefined;

  beforeAll(async () => {
    const port = (await freePort()) as number;
    const adminToken = `knock_admin_${randomBytes(18).toString('base64url')}`;
    const url = `http://localhost:${port}`;
    server = await startServer({ port, persistTo: state, vars: { ...SYSTEM_TEST_VARS, ADMIN_TOKEN: adminToken, TOKEN_HASH_KEY: randomBytes(24).toString('base64url'), PUBLIC_URL: url } });
    knock = { url, adminToken };
    browser = await launchPlain();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('alice registers a passkey, and signs in with her password and the passkey, then with the passkey alone', async () => {
    const { token } = await createUser(knock, alice);
    const visits = new ConsoleVisits(browser!, knock.url);
    const context = await browser!.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });

    const signInWithPassword = async () => {
      await page.goto(`${knock.url}/users/sign_in`);
      await page.getByLabel('Username').fill(alice.username);
      await page.getByLabel('Password').fill(alice.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    };
    await signInWithPassword();
    await page.waitForURL(`${knock.url}/`);

    await page.goto(`${knock.url}/-/profile/two_factor_auth`);
    await page.getByLabel('Name of the passkey').fill('laptop');
    await page.getByRole('button', { name: 'Register passkey' }).click();
    await page.getByRole('status').getByText('Registered the passkey laptop.').waitFor();
    expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
    await page.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
    await visits.expectAccessible(page);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect((await callApi<{ two_factor_enabled: boolean }>(knock, token, 'GET', '/user', 200)).two_factor_enabled).toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/users\/sign_in/);
    await signInWithPassword();
    // The password alone is not enough: the second step asks for the passkey.
    await page.waitForURL(`${knock.url}/users/two_factor`);
    expect((await page.goto(`${knock.url}/-/profile`))?.url()).toMatch(/\/users\/sign_in/);
    await page.goBack();
    await page.waitForURL(`${knock.url}/users/two_factor`);
    await page.reload();
    await visits.expectAccessible(page);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${knock.url}/`);
    await page.goto(`${knock.url}/-/profile/two_factor_auth`);
    await page.getByRole('heading', { name: 'Passkeys (1)' }).waitFor();
    const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(after.credentials[0]!.signCount).toBeGreaterThan(credentials[0]!.signCount);

    // A passkey alone signs in too (a discoverable credential, verified by the device): no username, no password.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/users\/sign_in/);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${knock.url}/`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await context.close();
  });
});
