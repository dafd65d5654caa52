// Access tokens for the test's people, obtained the way any OAuth client gets them: a
// confidential application, the authorization-code flow through the real pages in a separate
// browser (so the extension's browser stays signed out), and the token endpoint.

import type { Browser } from 'playwright-core';
import { callApi, type RunningServer } from './knock-server';
import { signInAndAuthorize, type Person } from './sign-in-pages';

const CALLBACK = 'http://127.0.0.1/e2e-seed-callback';

export async function tokenIssuer(server: RunningServer, browser: Browser) {
  const app = await callApi<{ application_id: string; secret: string }>(server, server.adminToken, 'POST', '/applications', 201, {
    name: 'E2E seeding',
    redirect_uri: CALLBACK,
    scopes: 'api',
    confidential: true,
  });

  return async function accessTokenFor(person: Person): Promise<string> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const state = `seed-${person.username}`;
      const redirected = new Promise<URL>((resolve) => {
        void context.route(`${CALLBACK}**`, async (route) => {
          resolve(new URL(route.request().url()));
          await route.fulfill({ status: 200, body: 'ok' });
        });
      });
      const authorize = new URL('/login/oauth/authorize', server.url);
      authorize.search = new URLSearchParams({
        client_id: app.application_id,
        redirect_uri: CALLBACK,
        response_type: 'code',
        scope: 'api',
        state,
      }).toString();
      await page.goto(authorize.href);
      await signInAndAuthorize(page, person);
      const callback = await redirected;
      if (callback.searchParams.get('state') !== state) throw new Error(`state mismatch: ${callback.href}`);
      const response = await fetch(`${server.url}/login/oauth/access_token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          client_id: app.application_id,
          client_secret: app.secret,
          code: callback.searchParams.get('code'),
          redirect_uri: CALLBACK,
        }),
      });
      if (!response.ok) throw new Error(`token exchange for ${person.username}: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { access_token: string }).access_token;
    } finally {
      await context.close();
    }
  };
}
