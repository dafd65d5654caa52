// End to end: My account and Administration in Debian's Chromium on the system run's shared Knock,
// with people of this file's own. An administrator blocks Bruno while he is signed in, and his
// next page lands on sign-in and says why; Cleo makes a personal access token, sees it once, uses
// it against /api/v4/user, revokes it, and the next call is 401. axe finds no serious or critical
// violation on any page on the way.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConsoleWorld } from './support/console-visits';
import { callApi, ROOT } from './support/knock-server';

/** Set KNOCK_SCREENSHOTS=1 to refresh docs/console-admin-user.png. */
const SCREENSHOTS = process.env.KNOCK_SCREENSHOTS === '1';

const admin = { username: 'adele', password: 'adele-password-1', name: 'Adele Admin' };
const bruno = { username: 'bruno', password: 'bruno-password-1', name: 'Bruno Brandt' };
const cleo = { username: 'cleo', password: 'cleo-password-1', name: 'Cleo Coder' };

describe('My account and Administration, against a real Knock', () => {
  const world = useConsoleWorld(admin, { people: [bruno, cleo] });

  const whoAmI = (token: string) => fetch(`${world.server.url}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': token } });

  it("an administrator blocks bruno, and bruno's open session ends: his next page is sign-in, saying why", async () => {
    const brunoPage = await world.visits.signIn(bruno);
    const adminPage = await world.visits.signIn(admin);
    await adminPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await adminPage.getByLabel('Search by username, name or email').fill('bruno');
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: bruno.name }).click();
    await adminPage.getByRole('heading', { name: bruno.name }).waitFor();
    await world.visits.expectAccessible(adminPage);
    if (SCREENSHOTS) await adminPage.screenshot({ path: join(ROOT, 'docs', 'console-admin-user.png'), fullPage: true });

    await adminPage.getByRole('button', { name: 'Block @bruno' }).click();
    await adminPage.getByRole('status').getByText('Blocked @bruno.').waitFor();
    await adminPage.getByRole('button', { name: 'Unblock @bruno' }).waitFor();
    expect(await adminPage.getByRole('button', { name: 'Deactivate @bruno' }).count(), 'GitLab does not deactivate a blocked user').toBe(0);
    const found = await callApi<{ state: string }[]>(world.server, world.server.adminToken, 'GET', '/users?username=bruno', 200);
    expect(found.map((u) => u.state)).toEqual(['blocked']);

    await brunoPage.reload();
    await brunoPage.waitForURL(/\/users\/sign_in/);
    await brunoPage.getByRole('alert').getByText('Your account has been blocked. Contact your administrator if you think this is an error.').waitFor();
    await world.visits.expectAccessible(brunoPage);
    expect((await whoAmI(world.tokens.get(bruno.username)!)).status).toBe(401);

    // Unblocked, bruno signs in again; the delete confirmation, checked and cancelled.
    await adminPage.getByRole('button', { name: 'Unblock @bruno' }).click();
    await adminPage.getByRole('status').getByText('Unblocked @bruno.').waitFor();
    await adminPage.getByRole('link', { name: 'Delete @bruno' }).click();
    await adminPage.getByRole('heading', { name: 'Delete @bruno?' }).waitFor();
    await world.visits.expectAccessible(adminPage);
    await adminPage.getByRole('link', { name: 'Cancel' }).click();
    await adminPage.getByRole('heading', { name: bruno.name }).waitFor();
    await brunoPage.getByLabel('Username').fill(bruno.username);
    await brunoPage.getByLabel('Password').fill(bruno.password);
    await brunoPage.getByRole('button', { name: 'Sign in' }).click();
    await brunoPage.getByRole('heading', { name: /Waiting for you|Your groups/ }).first().waitFor();
    await brunoPage.context().close();
    await adminPage.context().close();
  });

  it('cleo makes a personal access token, sees it once, uses it, revokes it, and the next call is 401', async () => {
    const page = await world.visits.signIn(cleo);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const form = page.getByRole('form', { name: 'New personal access token' });
    const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await form.getByLabel('Token name').fill('my script');
    await form.getByRole('checkbox', { name: 'read_user' }).check();
    await form.getByLabel(/Expiration date/).fill(expiry);
    await form.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('Created the token my script.').waitFor();
    const token = await page.getByLabel('Your new token (select it and copy)').inputValue();
    expect(token).toMatch(/^knock_at_/);
    await world.visits.expectAccessible(page);

    const me = await whoAmI(token);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe(cleo.username);

    await page.goto(`${world.server.url}/-/profile`);
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row').filter({ hasText: 'my script' });
    expect(await row.textContent()).toContain(expiry);
    await row.getByRole('link', { name: 'Revoke my script' }).click();
    await page.getByRole('heading', { name: 'Revoke the token my script?' }).waitFor();
    await world.visits.expectAccessible(page);
    await page.getByRole('button', { name: 'Revoke my script' }).click();
    await page.getByRole('status').getByText('Revoked the token my script. It stopped working at once.').waitFor();
    expect((await whoAmI(token)).status).toBe(401);
    await page.context().close();
  });
});
