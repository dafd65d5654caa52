// End to end: the web console in Debian's Chromium on the system run's shared Knock, the only
// file that seeds `npm start`'s demo data there. Alice approves Bob with an expiry from her dashboard, finds him among
// acme/website's members and in its audit log, and removes him; she adds a webhook to a local
// receiver, sees a delivery in its log and resends it; an administrator creates a user, who asks
// for access to acme and withdraws; alice answers six requests for one group in one bulk action; a project
// whose group requires two approvals waits for a second manager's. axe finds no serious or critical violation on any page on
// the way.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { useConsoleWorld } from './support/console-visits';
import { callApi, createUser, ROOT } from './support/knock-server';
import { eventually, WebhookReceiver } from './support/webhook-receiver';
// @ts-expect-error: plain ESM module without types
import { freePort } from '../../worker/dev/server.mjs';

/** Set KNOCK_SCREENSHOTS=1 to refresh the README's screenshots of the console under docs/. */
const SCREENSHOTS = process.env.KNOCK_SCREENSHOTS === '1';

const admin = { username: 'ada', password: 'ada-password-1', name: 'Ada Admin' };
const dave = { username: 'dave', password: 'dave-password-1', name: 'Dave Newcomer' };

describe('the web console, against a real Knock with the demo data', () => {
  const world = useConsoleWorld(admin, { demo: true });

  const expectAccessible = (page: Page) => world.visits.expectAccessible(page);
  /** A new tab of `who`'s browser on their dashboard, signed in once for the whole file. */
  const openAs = (who: { username: string; password: string }) => world.visits.open(who);
  let receiver: WebhookReceiver | null = null;
  afterAll(() => receiver?.stop());

  const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
  /** The expiry alice gives bob. */
  const bobsExpiry = inDays(30);

  it('alice approves bob with an expiry from her dashboard', async () => {
    const page = await openAs(world.demo.alice);
    await page.getByRole('heading', { name: 'Needs you (4)' }).waitFor();
    await expectAccessible(page);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'console-dashboard.png'), fullPage: true });

    const expiry = bobsExpiry;
    const row = page.getByRole('listitem', { name: 'Bob Builder (@bob) for acme/website' });
    await row.getByLabel('Access level for @bob').selectOption({ label: 'Maintainer' });
    await row.getByLabel('Expiry date for @bob (optional)').fill(expiry);
    await row.getByRole('button', { name: 'Approve @bob' }).click();
    await page.getByRole('status').getByText(`Approved @bob as Maintainer on acme/website until ${expiry}.`).waitFor();
    await page.getByRole('heading', { name: 'Needs you (3)' }).waitFor();

    const [bob] = await callApi<{ id: number }[]>(world.server, world.server.adminToken, 'GET', '/users?username=bob', 200);
    const member = await callApi<{ access_level: number; expires_at: string }>(world.server, world.server.adminToken, 'GET', `/projects/acme%2Fwebsite/members/all/${bob?.id}`, 200);
    expect(member).toMatchObject({ access_level: 40, expires_at: expiry });
    await page.close();
  });

  it("alice sees bob among acme/website's members, and removes him after a confirmation", async () => {
    const page = await openAs(world.demo.alice);
    await page.getByRole('link', { name: 'Acme / Website' }).click();
    await page.waitForURL(`${world.server.url}/acme/website`);
    await expectAccessible(page);
    // The approval is in the audit log (its own tab): newest first, by alice, about bob.
    await page.getByRole('navigation', { name: 'Pages of acme/website' }).getByRole('link', { name: 'Audit events' }).click();
    await page.waitForURL(`${world.server.url}/acme/website/-/audit_events`);
    const audit = page.getByRole('region', { name: /^Audit log/ });
    const latest = audit.getByRole('row').nth(1);
    expect(await latest.getByRole('cell').allInnerTexts()).toEqual([
      expect.stringMatching(/^(just now|\d+ minutes? ago)$/),
      'Alice Liddell',
      `Added as Maintainer until ${bobsExpiry} (access_request_approved)`,
      'Bob Builder',
    ]);
    await expectAccessible(page);
    await page.getByRole('navigation', { name: 'Pages of acme/website' }).getByRole('link', { name: 'Members' }).click();
    await page.waitForURL(`${world.server.url}/acme/website/-/project_members`);
    const bob = page.getByRole('row', { name: 'Bob Builder (@bob)' });
    await bob.waitFor();
    expect(await bob.getByLabel('Access level of @bob').inputValue()).toBe('40');
    await expectAccessible(page);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'console-project.png'), fullPage: true });

    await bob.getByRole('link', { name: 'Remove @bob' }).click();
    await page.getByRole('heading', { name: 'Remove this member?' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Remove @bob' }).click();
    await page.getByRole('status').getByText('Removed @bob from acme/website.').waitFor();
    expect(await page.getByRole('row', { name: 'Bob Builder (@bob)' }).count()).toBe(0);
    const members = await callApi<{ username: string }[]>(world.server, world.server.adminToken, 'GET', '/projects/acme%2Fwebsite/members', 200);
    expect(members.map((m) => m.username)).toEqual(['alice']);

    // The deny confirmation, the group page and the account page, for axe.
    await page.goto(`${world.server.url}/groups/acme`);
    await expectAccessible(page);
    await page.goto(`${world.server.url}/groups/acme/-/group_members?tab=access_requests`);
    await expectAccessible(page);
    await page.getByRole('listitem', { name: 'Carol Danvers (@carol)' }).getByRole('link', { name: 'Deny @carol' }).click();
    await page.getByRole('heading', { name: 'Deny this access request?' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Explore' }).click();
    await page.getByRole('heading', { name: 'Explore' }).waitFor();
    await expectAccessible(page);
    await page.close();
  });

  it('alice adds a webhook to a local receiver, sees a delivery in its log, and resends it', async () => {
    const rx = new WebhookReceiver(await freePort());
    receiver = rx;
    await rx.start();
    const page = await openAs(world.demo.alice);
    await page.goto(`${world.server.url}/acme/website/-/hooks`);
    const add = page.getByRole('form', { name: 'Add a webhook' });
    await add.getByLabel('URL').fill(rx.url);
    await add.getByLabel('Secret token (optional)').fill('e2e-token');
    await add.getByRole('button', { name: 'Add webhook' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expectAccessible(page);

    // carol's request for acme/website is denied: an access request event for the hook.
    await page.goto(`${world.server.url}/acme/website/-/project_members?tab=access_requests`);
    await page.getByRole('listitem', { name: 'Carol Danvers (@carol)' }).getByRole('link', { name: 'Deny @carol' }).click();
    await page.getByRole('button', { name: 'Deny @carol' }).click();
    await page.getByRole('status').getByText('Denied the request of @carol for acme/website.').waitFor();
    const delivery = await eventually('the delivery', () => rx.verifiedDeliveries(secret, 'e2e-token')[0]);
    expect(delivery.json).toMatchObject({ event_name: 'user_access_request_revoked_for_project', user_username: 'carol' });

    await page.getByRole('navigation', { name: 'Pages of acme/website' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('region', { name: /^Webhooks/ }).getByRole('link', { name: `Edit and deliveries of ${rx.url}` }).click();
    const deliveries = page.getByRole('region', { name: /^Deliveries/ });
    await eventually('the delivery in the log', async () => {
      if ((await deliveries.getByRole('button', { name: /^Resend delivery/ }).count()) > 0) return true;
      await page.reload();
      return undefined;
    });
    await expectAccessible(page);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'console-webhook.png'), fullPage: true });
    await deliveries.getByRole('button', { name: /^Resend delivery/ }).first().click();
    await page.getByRole('status').getByText(/^Resent delivery \d+: the webhook answered 200\.$/).waitFor();
    const resent = rx.verifiedDeliveries(secret, 'e2e-token');
    // The same delivery again: the same webhook-id.
    expect(resent.map((d) => d.headers['webhook-id'])).toEqual([delivery.headers['webhook-id'], delivery.headers['webhook-id']]);

    await page.getByRole('link', { name: `Delete ${rx.url}` }).click();
    await page.getByRole('heading', { name: 'Delete this webhook?' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('region', { name: 'Webhooks (1)' }).getByText(rx.url).waitFor();
    await expectAccessible(page);
    await page.close();
  });

  it('an administrator creates a user', async () => {
    const page = await openAs(admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await expectAccessible(page);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'console-admin-users.png'), fullPage: true });

    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Username').fill(dave.username);
    await form.getByLabel('Full name').fill(dave.name);
    await form.getByLabel('Email (optional)').fill('dave@example.test');
    await form.getByLabel('Password (at least 8 characters)').fill(dave.password);
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('status').getByText('Created @dave. They can sign in now.').waitFor();
    // The list is oldest first, and the shared server has the run's other people: find dave.
    await page.getByLabel('Search by username, name or email').fill(dave.username);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: dave.name }).click();
    await page.getByRole('heading', { name: /Dave Newcomer/ }).waitFor();
    await expectAccessible(page);
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('heading', { name: 'OAuth applications' }).waitFor();
    await expectAccessible(page);
    await page.close();
  });

  it('the new user asks for access to acme, and withdraws', async () => {
    const page = await openAs(dave);
    await expectAccessible(page);
    await page.goto(`${world.server.url}/groups/acme`);
    await page.getByRole('button', { name: 'Request access' }).click();
    await page.getByRole('status').getByText('You asked for access to acme. Its Owners will see your request.').waitFor();
    let pending = await callApi<{ username: string }[]>(world.server, world.server.adminToken, 'GET', '/groups/acme/access_requests', 200);
    expect(pending.map((r) => r.username)).toContain('dave');

    await page.getByRole('button', { name: 'Withdraw request' }).click();
    await page.getByRole('status').getByText('You withdrew your request for acme.').waitFor();
    await page.getByRole('button', { name: 'Request access' }).waitFor();
    pending = await callApi<{ username: string }[]>(world.server, world.server.adminToken, 'GET', '/groups/acme/access_requests', 200);
    expect(pending.map((r) => r.username)).not.toContain('dave');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('listitem', { name: 'Your request for acme' }).getByText('withdrawn by you').waitFor();
    await page.close();
  });

  it('alice answers six requests in one bulk action, filtered to one group', async () => {
    const alice = world.demo.alice;
    await callApi(world.server, alice.token, 'POST', '/groups', 201, { name: 'Crowd', path: 'crowd', visibility: 'public' });
    const askers = Array.from({ length: 6 }, (_, i) => ({ username: `crowd${i + 1}`, password: `crowd-password-${i + 1}`, name: `Crowd Member ${i + 1}` }));
    for (const person of askers) await callApi(world.server, (await createUser(world.server, person)).token, 'POST', '/groups/crowd/access_requests', 201);

    const page = await openAs(alice);
    await page.getByRole('link', { name: /^\d+ waiting for you to answer$/ }).waitFor();
    const inbox = page.getByRole('region', { name: /^Needs you/ });
    await inbox.getByLabel('Group or project').fill('crowd');
    await inbox.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('heading', { name: 'Needs you (6)' }).waitFor();
    await inbox.getByRole('link', { name: 'Select all shown' }).click();
    await page.getByRole('link', { name: 'Clear selection' }).waitFor();
    expect(await page.getByRole('checkbox', { name: /^Select @crowd\d's request for crowd$/, checked: true }).count()).toBe(6);
    await expectAccessible(page);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'console-bulk.png'), fullPage: true });

    await page.getByLabel('Access level for the selected requests').selectOption({ label: 'Reporter' });
    await page.getByRole('button', { name: 'Approve selected' }).click();
    await page.getByRole('status').getByText(/^Answered 6 of 6 selected requests\./).waitFor();
    await page.getByRole('heading', { name: 'Needs you (0)' }).waitFor();
    await expectAccessible(page);
    const members = await callApi<{ username: string; access_level: number }[]>(world.server, world.server.adminToken, 'GET', '/groups/crowd/members?query=crowd', 200);
    expect(members.map((m) => [m.username, m.access_level]).sort()).toEqual(askers.map((p) => [p.username, 20]));
    await page.close();
  });

  it('a project whose group requires two approvals waits for the second manager', async () => {
    const alice = world.demo.alice;
    const mia = { username: 'mia', password: 'mia-password-1', name: 'Mia Manager' };
    const rita = { username: 'rita', password: 'rita-password-1', name: 'Rita Requester' };
    const [miaMade, ritaMade] = [await createUser(world.server, mia), await createUser(world.server, rita)];
    const group = await callApi<{ id: number }>(world.server, alice.token, 'POST', '/groups', 201, { name: 'Twice', path: 'twice', visibility: 'public' });
    await callApi(world.server, alice.token, 'PUT', `/groups/${group.id}/access_request_rules`, 200, { approvals_required: 2 });
    await callApi(world.server, alice.token, 'POST', `/groups/${group.id}/members`, 201, { user_id: miaMade.id, access_level: 50 });
    await callApi(world.server, alice.token, 'POST', '/projects', 201, { name: 'App', path: 'app', namespace_id: group.id, visibility: 'public' });
    await callApi(world.server, ritaMade.token, 'POST', '/projects/twice%2Fapp/access_requests', 201, { reason: 'to ship it', access_level: 30 });

    const approveOnTab = async (who: { username: string; password: string }) => {
      const page = await openAs(who);
      await page.goto(`${world.server.url}/twice/app`);
      await page.getByRole('navigation', { name: 'Pages of twice/app' }).getByRole('link', { name: /^Access requests/ }).click();
      const row = page.getByRole('listitem', { name: 'Rita Requester (@rita)' });
      await row.getByText('to ship it').waitFor();
      await row.getByRole('button', { name: 'Approve @rita' }).click();
      return page;
    };
    const first = await approveOnTab(alice);
    await first.getByRole('status').getByText('Your approval of @rita is counted (1 of 2); it waits for more.').waitFor();
    await first.getByRole('listitem', { name: 'Rita Requester (@rita)' }).getByText('1 of 2 approvals (@alice)').waitFor();
    await expectAccessible(first);
    await first.close();
    await callApi(world.server, world.server.adminToken, 'GET', `/projects/twice%2Fapp/members/${ritaMade.id}`, 404);

    const second = await approveOnTab(mia);
    await second.getByRole('status').getByText('Approved @rita as Developer on twice/app.').waitFor();
    await second.close();
    const member = await callApi<{ access_level: number }>(world.server, world.server.adminToken, 'GET', `/projects/twice%2Fapp/members/${ritaMade.id}`, 200);
    expect(member.access_level).toBe(30);
  });
});
