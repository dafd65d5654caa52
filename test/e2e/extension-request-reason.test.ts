// End to end in Debian's Chromium, on the system run's shared Knock: an access request that says
// why, which level and for how long, from the extension's *Request access* tab to an approval in
// one click. Bob signs in with a personal access token and asks for Developer on a project of
// alice's for 8 hours "to fix the release"; he signs out and alice signs in: the popup shows the
// reason, the level and the end, and her one click grants exactly that (GitLab's API then lists bob
// as Developer until that minute).

import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, waitForText, type ExtensionBrowser } from './support/extension-browser';
import { callApi, createUser, sharedKnock, type Person } from './support/knock-server';

const server = sharedKnock();
const host = new URL(server.url).host;
const alice: Person = { username: 'alice-reason', password: 'alice-password-1', name: 'Alice Reason' };
const bob: Person = { username: 'bob-reason', password: 'bob-password-1', name: 'Bob Reason' };

describe('an access request with a reason, a level and an end, in the extension', () => {
  let extension: ExtensionBrowser;
  let tokens: Record<'alice' | 'bob', string>;
  let bobId: number;
  let project: { id: number; path_with_namespace: string };

  beforeAll(async () => {
    // The extension's build and the browser start while the people and the project are made.
    const launching = launchChromium();
    try {
      const [a, b] = await Promise.all([createUser(server, alice), createUser(server, bob)]);
      tokens = { alice: a.token, bob: b.token };
      bobId = b.id;
      await callApi(server, tokens.alice, 'POST', '/groups', 201, { name: 'Release', path: 'release-reason', visibility: 'public' });
      const group = await callApi<{ id: number }>(server, tokens.alice, 'GET', '/groups/release-reason', 200);
      project = await callApi(server, tokens.alice, 'POST', '/projects', 201, { name: 'App', path: 'app', namespace_id: group.id, visibility: 'public' });
    } finally {
      extension = await launching;
    }
  });

  afterAll(async () => {
    await extension?.close();
  });

  /** Signs the extension in to the shared server with a personal access token. */
  async function signInWithToken(token: string, who: Person) {
    const options = await extension.openExtensionPage('options');
    await options.locator(`button[aria-label="Use a personal access token for ${host}"]`).click();
    await options.locator(`[aria-label="${host}"] input[name="token"]`).fill(token);
    await options.locator(`[aria-label="${host}"] .token-form button[type="submit"]`).click();
    await waitForText(options, `Signed in as ${who.name} (@${who.username}) with a personal access token.`, `[aria-label="${host}"]`);
    return options;
  }

  async function openPopup(): Promise<Page> {
    const popup = await extension.openExtensionPage('popup');
    await popup.setViewport({ width: 380, height: 560 });
    return popup;
  }

  it('bob asks for Developer for 8 hours, saying why, from the Request access tab', async () => {
    const options = await extension.openExtensionPage('options');
    await options.locator('input[name="serverUrl"]').fill(server.url);
    await options.locator('form.add-server button[type="submit"]').click();
    await waitForText(options, `Added ${host}.`);
    await options.close();
    await (await signInWithToken(tokens.bob, bob)).close();

    const popup = await openPopup();
    await popup.locator('nav.views button:nth-of-type(2)').click();
    await popup.locator('input[name="kind"][value="project"]').click();
    await popup.locator('input[name="path"]').fill(project.path_with_namespace);
    await popup.locator('textarea[name="reason"]').fill('to fix the release');
    await popup.select('select[name="access_level"]', '30');
    await popup.select('select[name="duration"]', '1'); // 8 hours
    const asked = Date.now();
    await popup.locator('form.request-access button[type="submit"]').click();
    await waitForText(popup, `Access requested to project ${project.path_with_namespace}. Its owners will see your request.`);
    await popup.close();

    const [request] = await callApi<{ id: number; reason: string; access_level: number; expires_at: string }[]>(
      server, tokens.alice, 'GET', `/projects/${project.id}/access_requests`, 200,
    );
    expect(request).toMatchObject({ id: bobId, reason: 'to fix the release', access_level: 30 });
    // To the minute, 8 hours on.
    expect(request?.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
    expect(Math.abs(Date.parse(request?.expires_at ?? '') - (asked + 8 * 3_600_000))).toBeLessThan(5 * 60_000);
  });

  it('alice sees the reason, the level and the end in the popup, and approves what was asked in one click', async () => {
    const options = await extension.openExtensionPage('options');
    await options.locator(`button[aria-label="Sign out of ${host}"]`).click();
    await waitForText(options, 'Not signed in.', `[aria-label="${host}"]`);
    await options.close();
    await (await signInWithToken(tokens.alice, alice)).close();

    const [asked] = await callApi<{ expires_at: string }[]>(server, tokens.alice, 'GET', `/projects/${project.id}/access_requests`, 200);
    const end = asked?.expires_at ?? '';
    const popup = await openPopup();
    const row = `[aria-label="${host}"] [aria-labelledby*="project"] [aria-label*="@${bob.username}"]`;
    await waitForText(popup, `asks for Developer · until ${end.slice(0, 16).replace('T', ' ')} UTC`, row);
    await waitForText(popup, 'to fix the release', `${row} .reason`);
    await popup.locator(`${row} button[aria-label="Approve @${bob.username}"]`).click();
    await waitForText(popup, `Approved @${bob.username} as Developer on ${project.path_with_namespace}.`);
    await popup.close();

    const member = await callApi<{ access_level: number; expires_at: string }>(server, tokens.alice, 'GET', `/projects/${project.id}/members/${bobId}`, 200);
    expect(member).toMatchObject({ access_level: 30, expires_at: end });
  });
});
