// The extension's journey end to end, written once and run in each browser
// (extension-chromium.test.ts, extension-firefox.test.ts): the built extension against two real
// Knock servers at once, on two addresses: a `wrangler dev` of the journey's own, and the system
// run's shared one behind a proxy (so that it can stop answering without stopping for the other
// files).
//
// The first server has `npm start`'s demo data (alice owns acme and acme/website; bob and carol
// asked for access to both); on the second, alice (another account, named for the browser) owns
// the group beta, where dave asked.
//
// Alice adds both servers (no permission prompt: 127.0.0.1 was granted at install), signs in to
// the first through its real sign-in and consent pages, and to the second with a personal access
// token (a wrong one is refused with a clear error). The popup groups the pending requests by
// server; she approves Bob at a level and the API agrees; the badge counts every server. The
// second server's address stops answering: the popup says so and the first keeps working (she
// denies Carol). She signs out of the first and signs in again without seeing a page, and asks for
// access to a group by its path; once approved, "Your requests" says so. Six people ask for a
// group of hers: she filters the popup to it and approves all six in one bulk action (axe at 390
// and 1280 px on the popup and the options page).
//
// The first server sits behind a recording proxy: each poll of the extension is one request to
// Knock's inbox, a 304 while nothing changed (plus the user's own requests after sign-in and while
// one of them is pending).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { waitForText, type ExtensionBrowser } from './support/extension-browser';
import { seedDemo, type DemoUser } from './support/demo';
import { callApi, createUser, ROOT, sharedKnockBehindProxy, startRecordedKnock, type Person, type RunningServer } from './support/knock-server';
import type { RecordedRequest } from './support/request-log';
import { expectAccessibleExtensionPage } from './support/extension-axe';

/** The names of the demo data (worker/dev/demo-data.mjs) on the first server. */
const DEMO_NAMES = { alice: 'Alice Liddell', bob: 'Bob Builder', carol: 'Carol Danvers' };

/** Set KNOCK_SCREENSHOTS=1 to refresh the README's screenshot of the popup (Chromium's run takes it). */
const SCREENSHOTS = process.env.KNOCK_SCREENSHOTS === '1';


const host = (server: RunningServer) => new URL(server.url).host;


// Elements are found by CSS (ids, names, aria-label attributes): puppeteer's ARIA queries do not
// find the sign-in page's fields in Firefox's auth window.
const inServer = (server: RunningServer, selector: string) => `[aria-label="${host(server)}"] ${selector}`;
const yourRequests = (server: RunningServer) => inServer(server, `[aria-label="Your requests on ${host(server)}"]`);

/** `browser` names the second server's people and group, which share that server with the run's other files. */
export function extensionJourney(browser: string, launch: () => Promise<ExtensionBrowser>) {
  const alice: Person = { username: `alice-${browser}`, password: 'alice-password-1', name: 'Alice Owner' };
  const dave: Person = { username: `dave-${browser}`, password: 'dave-password-1', name: 'Dave Dev' };
  const beta = `beta-${browser}`;
  const tmp = mkdtempSync(join(tmpdir(), 'knock-e2e-'));
  let first: RunningServer & { requests: RecordedRequest[] };
  let second: RunningServer;
  let aliceOnFirst: string;
  let demo: Record<'alice' | 'bob' | 'carol', DemoUser>;
  let aliceOnSecond: string;
  let extension: ExtensionBrowser;
  let website: { id: number };
  let acme: { id: number };

  beforeAll(async () => {
    // The extension's build and the browser start while the first server starts and is filled.
    const launching = launch();
    try {
      [first, second] = await Promise.all([startRecordedKnock(join(tmp, 'first')), sharedKnockBehindProxy()]);
      demo = await seedDemo(first);
      const daveOnSecond = (await createUser(second, dave)).token;
      [aliceOnFirst, aliceOnSecond] = [demo.alice.token, (await createUser(second, alice)).token];
      acme = await callApi(first, aliceOnFirst, 'GET', '/groups/acme', 200);
      website = await callApi(first, aliceOnFirst, 'GET', '/projects/acme%2Fwebsite', 200);
      await callApi(second, aliceOnSecond, 'POST', '/groups', 201, { name: 'Beta', path: beta, visibility: 'public' });
      await callApi(second, daveOnSecond, 'POST', `/groups/${beta}/access_requests`, 201);
    } finally {
      extension = await launching;
    }
  });

  afterAll(async () => {
    await extension?.close();
    await Promise.all([first?.stop(), second?.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  });

  const badgeText = async () => (await extension.badge()).text;
  /** Bob's row under acme/website on the first server (he asked for acme too). */
  const bobOnWebsite = `[aria-labelledby*="project"] [aria-label*="@bob"]`;

  /** The API requests the extension made to the first server since `mark` (an index into its log): `GET /api/v4/access_requests 304`. */
  const apiRequestsSince = (mark: number) =>
    first.requests
      .slice(mark)
      .filter((r) => r.path.startsWith('/api/v4/'))
      .map((r) => `${r.method} ${r.path.replace(/\?.*/, '')} ${r.status}`);

  it('adds both servers without asking for a permission granted at install', async () => {
    const granted = await extension.grantedOrigins();
    const options = await extension.openExtensionPage('options');
    for (const server of [first, second]) {
      await options.locator('input[name="serverUrl"]').fill(server.url);
      await options.locator('form.add-server button[type="submit"]').click();
      await waitForText(options, `Added ${host(server)}. Sign in to it with its “Sign in” button above.`);
    }
    expect(await extension.grantedOrigins()).toEqual(granted);
    expect(granted).toEqual(expect.arrayContaining(['http://127.0.0.1/*']));
    await options.close();
  });

  it('signs in to the first server through its sign-in and consent pages', async () => {
    const options = await extension.openExtensionPage('options');
    const mark = first.requests.length;
    const authWindow = extension.waitForWindow(`${first.url}/`);
    await options.locator(`button[aria-label="Sign in to ${host(first)}"]`).click();
    const auth = await authWindow;
    await auth.locator('input#username').fill(demo.alice.username);
    await auth.locator('input#password').fill(demo.alice.password);
    await auth.locator('button[type="submit"]').click();
    await auth.locator('button[value="authorize"]').click();

    await waitForText(options, `Signed in as ${DEMO_NAMES.alice} (@alice).`, `[aria-label="${host(first)}"]`);
    await vi.waitFor(async () => expect(await badgeText()).toBe('4'), { timeout: 15_000, interval: 100 });
    // Who signed in, then the first poll: one request for the inbox, one for her own requests, one
    // for her alerts (break-glass grants, access ending soon).
    expect(apiRequestsSince(mark).sort()).toEqual([
      'GET /api/v4/access_requests 200',
      'GET /api/v4/user 200',
      'GET /api/v4/user/access_alerts 200',
      'GET /api/v4/user/access_requests 200',
    ]);
    await options.close();
  });

  it('signs in to the second server with a personal access token, after refusing a wrong one', async () => {
    const options = await extension.openExtensionPage('options');
    await options.locator(`button[aria-label="Use a personal access token for ${host(second)}"]`).click();
    const field = options.locator(inServer(second, 'input[name="token"]'));
    const useToken = options.locator(inServer(second, '.token-form button[type="submit"]'));
    await field.fill('knock_at_not-a-real-token');
    await useToken.click();
    await waitForText(options, `${host(second)} refused the personal access token (401 Unauthorized).`);

    await field.fill(aliceOnSecond);
    await useToken.click();
    await waitForText(options, `Signed in as ${alice.name} (@${alice.username}) with a personal access token.`, `[aria-label="${host(second)}"]`);
    await vi.waitFor(async () => expect(await badgeText()).toBe('5'), { timeout: 15_000, interval: 100 });
    await options.close();
  });

  it('shows the pending requests grouped by server, then by group and project', async () => {
    const mark = first.requests.length;
    const popup = await openPopup();
    for (const section of ['group', 'project']) {
      await waitForText(popup, `${DEMO_NAMES.bob} @bob`, inServer(first, `[aria-labelledby*="${section}"]`));
      await waitForText(popup, `${DEMO_NAMES.carol} @carol`, inServer(first, `[aria-labelledby*="${section}"]`));
    }
    await waitForText(popup, `${dave.name} @${dave.username}`, inServer(second, '[aria-labelledby*="group"]'));
    expect(await popup.$$eval(inServer(first, 'section.source li'), (rows) => rows.length)).toBe(4);
    expect(await regionText(popup, first)).toMatch(/@alice[\s\S]*Acme[\s\S]*Website[\s\S]*acme\/website/);
    expect(await regionText(popup, first)).not.toContain(`@${dave.username}`);
    const levels = await popup.$$eval(`${bobOnWebsite} select option`, (options) => options.map((o) => o.textContent));
    expect(levels).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
    expect(await popup.$eval(`${bobOnWebsite} select`, (select) => (select as HTMLSelectElement).value)).toBe('30');
    await waitForText(popup, 'Updated ');
    // The popup fills from one request: nothing changed since the last poll, so it is a 304 to the
    // ETag it was given (alice has nothing pending of her own, so her own requests are not asked).
    // (A timed poll in the same moment would add another such request, and nothing else.)
    const refreshes = apiRequestsSince(mark);
    expect(refreshes.length).toBeGreaterThan(0);
    expect(refreshes.filter((r) => r !== 'GET /api/v4/access_requests 304')).toEqual([]);
    expect(first.requests.slice(mark).find((r) => r.path.startsWith('/api/v4/access_requests'))?.ifNoneMatch).toMatch(/^W\/"/);
    if (SCREENSHOTS && extension.name === 'Chromium') {
      const main = await popup.$('main.popup');
      await main?.screenshot({ path: join(ROOT, 'docs', 'popup-two-servers.png') });
    }
    await popup.close();
  });

  it('approves Bob as Maintainer on the first server, and its API agrees', async () => {
    const popup = await openPopup();
    await popup.locator(`${bobOnWebsite} select`).wait();
    await popup.select(`${bobOnWebsite} select`, '40');
    await popup.locator(`${bobOnWebsite} button[aria-label="Approve @bob"]`).click();
    await waitForText(popup, 'Approved @bob as Maintainer on acme/website.');

    const members = await callApi<{ username: string; access_level: number }[]>(
      first, aliceOnFirst, 'GET', `/projects/${website.id}/members`, 200,
    );
    expect(members).toContainEqual(expect.objectContaining({ username: 'bob', access_level: 40 }));
    const stillAsking = await callApi<{ username: string }[]>(first, aliceOnFirst, 'GET', `/projects/${website.id}/access_requests`, 200);
    expect(stillAsking.map((r) => r.username)).toEqual(['carol']);
    expect(await badgeText()).toBe('4');
    await popup.close();
  });

  it('shows a stopped server as not answering, and the other keeps working', async () => {
    await second.stop();
    const popup = await openPopup();
    await waitForText(popup, `${host(second)} is not answering (Could not reach ${second.url}).`, `[aria-label="${host(second)}"]`);
    const carolOnAcme = inServer(first, '[aria-labelledby*="group"] [aria-label*="@carol"]');
    await waitForText(popup, `${DEMO_NAMES.carol} @carol`, carolOnAcme);

    await popup.locator(`${carolOnAcme} button[aria-label="Deny @carol"]`).click();
    await popup.locator(`${carolOnAcme} button[aria-label="Confirm: deny @carol"]`).click();
    await waitForText(popup, "Denied @carol's request for acme.");
    const stillAsking = await callApi<{ username: string }[]>(first, aliceOnFirst, 'GET', `/groups/${acme.id}/access_requests`, 200);
    expect(stillAsking.map((r) => r.username)).toEqual(['bob']);
    const members = await callApi<{ username: string }[]>(first, aliceOnFirst, 'GET', `/groups/${acme.id}/members`, 200);
    expect(members.map((m) => m.username)).not.toContain('carol');
    // Bob's on acme, Carol's on acme/website and Dave's, as the second server last listed it, are still waiting.
    expect(await extension.badge()).toEqual({
      text: '3',
      title: `Knock: 3 access requests waiting. Not up to date: ${host(second)}.`,
    });
    await popup.close();
  });

  it('signs out of the first server, and signs in again without a page to fill in', async () => {
    const options = await extension.openExtensionPage('options');
    const firstItem = `[aria-label="${host(first)}"]`;
    await options.locator(`button[aria-label="Sign out of ${host(first)}"]`).click();
    await waitForText(options, 'Not signed in.', firstItem);

    // The server remembers alice's consent and her session: the auth window closes by itself.
    await options.locator(`button[aria-label="Sign in to ${host(first)}"]`).click();
    await waitForText(options, `Signed in as ${DEMO_NAMES.alice} (@alice).`, firstItem);
    await options.close();
  });

  it('asks for access to a group on the first server by its path', async () => {
    const other = await callApi<{ id: number }>(first, first.adminToken, 'POST', '/groups', 201, {
      name: 'Gamma',
      path: 'gamma',
      visibility: 'public',
    });
    const popup = await openPopup();
    await popup.locator('nav.views button:nth-of-type(2)').click();
    await popup.locator('select[name="server"]').wait();
    await popup.select('select[name="server"]', first.url);
    await popup.locator('input[name="kind"][value="group"]').click();
    await popup.locator('input[name="path"]').fill('gamma');
    await popup.locator('form.request-access button[type="submit"]').click();
    await waitForText(popup, 'Access requested to group gamma. Its owners will see your request.');

    const pending = await callApi<{ id: number; username: string }[]>(first, first.adminToken, 'GET', `/groups/${other.id}/access_requests`, 200);
    expect(pending.map((r) => r.username)).toEqual(['alice']);
    await popup.locator('nav.views button:nth-of-type(1)').click();
    await waitForText(popup, 'Pending, asked', yourRequests(first));
    await popup.close();

    // The group's owner approves her: the popup says so under "Your requests".
    await callApi(first, first.adminToken, 'PUT', `/groups/${other.id}/access_requests/${pending[0]?.id}/approve?access_level=20`, 201);
    const again = await openPopup();
    await waitForText(again, 'Approved as Reporter', yourRequests(first));
    await again.close();
  });

  it('answers six requests on the first server in one bulk action, filtered to one group', async () => {
    await callApi(first, aliceOnFirst, 'POST', '/groups', 201, { name: 'Crowd', path: 'crowd', visibility: 'public' });
    const askers = Array.from({ length: 6 }, (_, i) => ({ username: `crowd${i + 1}`, password: `crowd-password-${i + 1}`, name: `Crowd Member ${i + 1}` }));
    for (const person of askers) await callApi(first, (await createUser(first, person)).token, 'POST', '/groups/crowd/access_requests', 201);
    const popup = await openPopup();
    await waitForText(popup, 'Crowd Member 6', `[aria-label="${host(first)}"]`);
    // Bob's on acme, Carol's on acme/website and Dave's on the stopped second server, and the six.
    await vi.waitFor(async () => expect(await badgeText()).toBe('9'), { timeout: 15_000, interval: 100 });
    await popup.locator('input[type="search"]').fill('crowd');
    await popup.locator('.bulk .select-all input').click();
    expect(await popup.$$eval('li.request input.select', (boxes) => boxes.map((b) => (b as HTMLInputElement).checked))).toEqual(Array(6).fill(true));
    await expectAccessibleExtensionPage(popup);
    await popup.select('.bulk select', '20');
    await popup.locator('.bulk button.approve').click();
    await waitForText(popup, 'Approved as Reporter: 6 requests.');

    const members = await callApi<{ username: string; access_level: number }[]>(first, aliceOnFirst, 'GET', '/groups/crowd/members?query=crowd', 200);
    expect(members.map((m) => [m.username, m.access_level])).toEqual(askers.map((p) => [p.username, 20]));
    await vi.waitFor(async () => expect(await badgeText()).toBe('3'), { timeout: 15_000, interval: 100 });
    await expectAccessibleExtensionPage(popup);
    await popup.close();
    const options = await extension.openExtensionPage('options');
    await expectAccessibleExtensionPage(options);
    await options.close();
  });

  /** The popup's page, opened in a tab (a test cannot click the toolbar button), at the popup's size. */
  async function openPopup(): Promise<Page> {
    const popup = await extension.openExtensionPage('popup');
    await popup.setViewport({ width: 380, height: 560 });
    return popup;
  }

  async function regionText(popup: Page, server: RunningServer): Promise<string> {
    return popup.$eval(`[aria-label="${host(server)}"]`, (element) => (element as HTMLElement).innerText);
  }
}
