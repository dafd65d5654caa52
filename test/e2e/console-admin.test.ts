// End to end: My account and Administration in Debian's Chromium on a fresh Knock Worker with
// `npm start`'s demo data. An administrator blocks Bob while he is signed in, and his next page
// lands on sign-in and says why; Carol makes a personal access token, sees it once, uses it
// against /api/v4/user, revokes it, and the next call is 401. axe finds no serious or critical
// violation on any page on the way.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConsoleWorld } from './support/console-visits';
import { callApi, ROOT } from './support/knock-server';

/** Set KNOCK_SCREENSHOTS=1 to refresh docs/console-admin-user.png. */
const SCREENSHOTS = process.env.KNOCK_SCREENSHOTS === '1';

const admin = { username: 'ada', password: 'ada-password-1', name: 'Ada Admin' };

describe('My account and Administration, against a real Knock with the demo data', () => {
  const world = useConsoleWorld(admin);

  const whoAmI = (token: string) => fetch(`${world.server.url}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': token } });

  it("an administrator blocks bob, and bob's open session ends: his next page is sign-in, saying why", async () => {
    const bob = await world.visits.signIn(world.demo.bob);
    const ada = await world.visits.signIn(admin);
    await ada.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await ada.getByLabel('Search by username, name or email').fill('bob');
    await ada.getByRole('button', { name: 'Search' }).click();
    await ada.getByRole('link', { name: 'Bob Builder' }).click();
    await ada.getByRole('heading', { name: /Bob Builder/ }).waitFor();
    await world.visits.expectAccessible(ada);
    if (SCREENSHOTS) await ada.screenshot({ path: join(ROOT, 'docs', 'console-admin-user.png'), fullPage: true });

    await ada.getByRole('button', { name: 'Block @bob' }).click();
    await ada.getByRole('status').getByText('Blocked @bob.').waitFor();
    await ada.getByRole('button', { name: 'Unblock @bob' }).waitFor();
    expect(await ada.getByRole('button', { name: 'Deactivate @bob' }).count(), 'GitLab does not deactivate a blocked user').toBe(0);
    const found = await callApi<{ state: string }[]>(world.server, world.server.adminToken, 'GET', '/users?username=bob', 200);
    expect(found.map((u) => u.state)).toEqual(['blocked']);

    await bob.reload();
    await bob.waitForURL(/\/users\/sign_in/);
    await bob.getByRole('alert').getByText('Your account has been blocked. Contact your administrator if you think this is an error.').waitFor();
    await world.visits.expectAccessible(bob);
    expect((await whoAmI(world.demo.bob.token)).status).toBe(401);

    // Unblocked, bob signs in again; the delete confirmation, checked and cancelled.
    await ada.getByRole('button', { name: 'Unblock @bob' }).click();
    await ada.getByRole('status').getByText('Unblocked @bob.').waitFor();
    await ada.getByRole('link', { name: 'Delete @bob' }).click();
    await ada.getByRole('heading', { name: 'Delete @bob?' }).waitFor();
    await world.visits.expectAccessible(ada);
    await ada.getByRole('link', { name: 'Cancel' }).click();
    await ada.getByRole('heading', { name: /Bob Builder/ }).waitFor();
    await bob.getByLabel('Username').fill(world.demo.bob.username);
    await bob.getByLabel('Password').fill(world.demo.bob.password);
    await bob.getByRole('button', { name: 'Sign in' }).click();
    await bob.getByRole('heading', { name: /Waiting for you|Your groups/ }).first().waitFor();
    await bob.context().close();
    await ada.context().close();
  });

  it('carol makes a personal access token, sees it once, uses it, revokes it, and the next call is 401', async () => {
    const page = await world.visits.signIn(world.demo.carol);
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
    expect(((await me.json()) as { username: string }).username).toBe('carol');

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
