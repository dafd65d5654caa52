// End to end: the built extension in Debian's Chromium against a fresh Knock Worker. Alice signs
// in through the real sign-in and consent pages in the auth window, sees Bob's and Carol's
// requests in the popup, approves Bob as Maintainer and denies Carol; the API and the badge agree.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  badgeText,
  buildExtension,
  EXTENSION_ID,
  extensionPage,
  launchPlain,
  launchWithExtension,
} from './support/extension-browser';
import { callApi, ROOT, startKnock, type RunningServer } from './support/knock-server';
import { signInAndAuthorize, type Person } from './support/sign-in-pages';
import { tokenIssuer } from './support/user-tokens';

const alice: Person & { name: string } = { username: 'alice', password: 'alice-password-1', name: 'Alice Owner' };
const bob: Person & { name: string } = { username: 'bob', password: 'bob-password-1', name: 'Bob Builder' };
const carol: Person & { name: string } = { username: 'carol', password: 'carol-password-1', name: 'Carol Coder' };

/** Set KNOCK_SCREENSHOTS=1 to refresh the README's screenshots under docs/. */
const SCREENSHOTS = process.env.KNOCK_SCREENSHOTS === '1';

describe('the extension, against a real Knock', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'knock-e2e-'));
  let server: RunningServer;
  let plainBrowser: Browser;
  let context: BrowserContext;
  let aliceToken: string;
  let website: { id: number };
  let acme: { id: number };

  beforeAll(async () => {
    buildExtension();
    server = await startKnock(join(tmp, 'state'));
    plainBrowser = await launchPlain();

    const users: Record<string, { id: number }> = {};
    for (const person of [alice, bob, carol]) {
      users[person.username] = await callApi(server, server.adminToken, 'POST', '/users', 201, {
        username: person.username,
        name: person.name,
        password: person.password,
        email: `${person.username}@example.test`,
      });
    }
    const accessTokenFor = await tokenIssuer(server, plainBrowser);
    aliceToken = await accessTokenFor(alice);
    acme = await callApi(server, aliceToken, 'POST', '/groups', 201, { name: 'Acme', path: 'acme', visibility: 'public' });
    website = await callApi(server, aliceToken, 'POST', '/projects', 201, {
      name: 'Website',
      path: 'website',
      namespace_id: acme.id,
      visibility: 'public',
    });
    await callApi(server, await accessTokenFor(bob), 'POST', '/projects/acme%2Fwebsite/access_requests', 201);
    await callApi(server, await accessTokenFor(carol), 'POST', '/groups/acme/access_requests', 201);

    context = await launchWithExtension(join(tmp, 'profile'));
  });

  afterAll(async () => {
    await context?.close();
    await plainBrowser?.close();
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('signs in from the options page through the sign-in and consent pages', async () => {
    const options = await context.newPage();
    await options.goto(extensionPage('options'));
    await options.getByLabel('Server URL').fill(server.url);
    await options.getByRole('button', { name: 'Save' }).click();
    await options.getByText(`Saved. Knock will talk to ${server.url}.`).waitFor();

    const authWindow = context.waitForEvent('page');
    await options.getByRole('button', { name: 'Sign in' }).click();
    const auth = await authWindow;
    await auth.waitForURL((url) => url.href.startsWith(`${server.url}/`));
    await signInAndAuthorize(auth, alice);

    await options.getByText(`Signed in as ${alice.name} (@alice) on ${server.url}.`).waitFor();
    await vi.waitFor(async () => expect(await badgeText(context)).toBe('2'), { timeout: 15_000, interval: 200 });
    await options.close();
  });

  it('shows both pending requests in the popup, grouped by group and project', async () => {
    const popup = await openPopup();
    const project = popup.getByRole('region', { name: /Project .*Website/ });
    const group = popup.getByRole('region', { name: /Group Acme/ });
    await project.getByRole('listitem', { name: `${bob.name} (@bob)` }).waitFor();
    await group.getByRole('listitem', { name: `${carol.name} (@carol)` }).waitFor();
    expect(await project.getByRole('listitem').innerText()).toMatch(/requested (just now|\d+ minutes? ago)/);
    expect(await optionTexts(popup, 'Access level for @bob')).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
    expect(await popup.getByLabel('Access level for @bob').inputValue()).toBe('30');
    if (SCREENSHOTS) {
      await popup.getByText(/^Updated /).waitFor();
      await popup.locator('main.popup').screenshot({ path: join(ROOT, 'docs', 'popup.png') });
    }
    await popup.close();
  });

  it('approves Bob as Maintainer, and the API agrees', async () => {
    const popup = await openPopup();
    await popup.getByLabel('Access level for @bob').selectOption({ label: 'Maintainer' });
    await popup.getByRole('button', { name: 'Approve @bob' }).click();
    await popup.getByText('Approved @bob as Maintainer on acme/website.').waitFor();

    const members = await callApi<{ username: string; access_level: number }[]>(
      server, aliceToken, 'GET', `/projects/${website.id}/members`, 200,
    );
    expect(members).toContainEqual(expect.objectContaining({ username: 'bob', access_level: 40 }));
    const stillPending = await callApi<unknown[]>(server, aliceToken, 'GET', `/projects/${website.id}/access_requests`, 200);
    expect(stillPending).toEqual([]);
    expect(await badgeText(context)).toBe('1');
    await popup.close();
  });

  it('denies Carol, and the badge follows', async () => {
    const popup = await openPopup();
    await popup.getByRole('button', { name: 'Deny @carol' }).click();
    await popup.getByText("Denied @carol's request for acme.").waitFor();

    const stillPending = await callApi<unknown[]>(server, aliceToken, 'GET', `/groups/${acme.id}/access_requests`, 200);
    expect(stillPending).toEqual([]);
    const members = await callApi<{ username: string }[]>(server, aliceToken, 'GET', `/groups/${acme.id}/members`, 200);
    expect(members.map((m) => m.username)).not.toContain('carol');
    expect(await badgeText(context)).toBe('');

    const reopened = await openPopup();
    await reopened.getByText("No pending access requests. You're all caught up.").waitFor();
    if (SCREENSHOTS) {
      await reopened.getByText(/^Updated /).waitFor();
      await reopened.locator('main.popup').screenshot({ path: join(ROOT, 'docs', 'popup-empty.png') });
    }
    await reopened.close();
    await popup.close();
  });

  it('requests access to a group by its path', async () => {
    const bobsGroup = await callApi<{ id: number }>(server, server.adminToken, 'POST', '/groups', 201, {
      name: 'Beta', path: 'beta', visibility: 'public',
    });
    const popup = await openPopup();
    await popup.getByRole('button', { name: 'Request access' }).click();
    await popup.getByRole('radio', { name: 'a group' }).check();
    await popup.getByLabel('Path').fill('beta');
    await popup.getByRole('button', { name: 'Send request' }).click();
    await popup.getByText('Access requested to group beta. Its owners will see your request.').waitFor();

    const pending = await callApi<{ username: string }[]>(server, server.adminToken, 'GET', `/groups/${bobsGroup.id}/access_requests`, 200);
    expect(pending.map((r) => r.username)).toEqual(['alice']);
    await popup.close();
  });

  /** The popup's page, opened in a tab (a test cannot click the toolbar button). */
  async function openPopup(): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize({ width: 380, height: 520 });
    await page.goto(extensionPage('popup'));
    expect(page.url()).toContain(EXTENSION_ID);
    return page;
  }
});

async function optionTexts(page: Page, label: string): Promise<string[]> {
  return page.getByLabel(label).locator('option').allInnerTexts();
}
