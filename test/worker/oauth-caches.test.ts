// What the token endpoint remembers between requests (an application read from its object, the
// user as the Directory pushed it to the grant authority) never lets a deleted application or an
// inactive user obtain tokens beyond the documented bound.
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { ADMIN, authorizeCode, authorizePath, Browser, call, consentFields, csrfOf, exchange, refresh, registerApp, signedIn, tokenCall, type App, type Tokens } from './support/oauth';
import { advance } from './support/clock';

const pairOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Tokens;
};
const expectError = async (res: Response, status: number, error: string) => {
  expect(res.status).toBe(status);
  expect(await res.json()).toMatchObject({ error });
};
const redeem = (app: App, code: string) => tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri });

/** A grant refreshed once (so this isolate has read the application), and a second code not yet redeemed. */
const refreshedGrantAndPendingCode = async () => {
  const app = await registerApp();
  const { user, browser } = await signedIn();
  const first = await exchange(app, (await authorizeCode(browser, app)).code);
  const tokens = await pairOf(await refresh(app, first.refresh_token));
  const { code } = await authorizeCode(browser, app);
  return { app, user, tokens, code };
};

/**
 * Deletes the application as another isolate would (its object forgets it, then the Directory's
 * row goes): this isolate is not told.
 */
const deleteElsewhere = async (app: App, endGrants: boolean) => {
  await env.CLIENT_HOLDERS.getByName(app.clientId).forgetApplication(app.clientId);
  await runInDurableObject(env.DIRECTORY.getByName('directory'), (_i, state) => {
    state.storage.sql.exec('DELETE FROM applications WHERE client_id = ?', app.clientId);
  });
  if (!endGrants) return;
  await env.CLIENT_HOLDERS.getByName(app.clientId).endGrants();
};

describe('a deleted application', () => {
  it('cannot redeem a code right after its deletion', async () => {
    const { app, code } = await refreshedGrantAndPendingCode();
    expect((await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    await expectError(await redeem(app, code), 401, 'invalid_client');
  });

  it('cannot refresh right after its deletion', async () => {
    const { app, tokens } = await refreshedGrantAndPendingCode();
    expect((await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    await expectError(await refresh(app, tokens.refresh_token), 401, 'invalid_client');
  });

  it('cannot redeem a code through an isolate that still remembers the application, once the deletion has reached the user', async () => {
    const { app, code } = await refreshedGrantAndPendingCode();
    await deleteElsewhere(app, true);
    await expectError(await redeem(app, code), 400, 'invalid_grant');
  });

  it('ends what a code redeemed in the moment before the deletion reached the user gave, even when the deletion stopped half-way', async () => {
    const { app, code } = await refreshedGrantAndPendingCode();
    // Deleted elsewhere, and that isolate stopped before it ended the holders' grants.
    await deleteElsewhere(app, false);
    const late = await pairOf(await redeem(app, code));
    expect((await call('/api/v4/user', { headers: { Authorization: `Bearer ${late.access_token}` } })).status).toBe(200);
    // The application's object finishes the deletion from its alarm.
    expect(await runDurableObjectAlarm(env.CLIENT_HOLDERS.getByName(app.clientId))).toBe(true);
    expect((await call('/api/v4/user', { headers: { Authorization: `Bearer ${late.access_token}` } })).status).toBe(401);
    await expectError(await refresh(app, late.refresh_token), 400, 'invalid_grant');
    // And no second run is left waiting.
    expect(await runDurableObjectAlarm(env.CLIENT_HOLDERS.getByName(app.clientId))).toBe(false);
  });

  it('gets no code through an isolate that still remembers it: neither for a user who authorized it before nor for a new one', async () => {
    const app = await registerApp();
    const before = await signedIn();
    await exchange(app, (await authorizeCode(before.browser, app)).code);
    await deleteElsewhere(app, true);
    const newcomer = await signedIn();
    for (const { browser } of [before, newcomer]) {
      const consent = await browser.get(authorizePath({ client_id: app.clientId, redirect_uri: app.redirectUri, state: 's' }));
      expect(consent.status).toBe(200);
      const html = await consent.text();
      const answer = await browser.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('Location')).toBeNull();
      expect(await answer.text()).toContain('No application is registered with this client_id.');
    }
  });

  it('finds its grants ended when it refreshes through an isolate that still remembers it, and is unknown a minute later', async () => {
    const { app, tokens } = await refreshedGrantAndPendingCode();
    await deleteElsewhere(app, true);
    await expectError(await refresh(app, tokens.refresh_token), 400, 'invalid_grant');
    advance(61);
    await expectError(await refresh(app, tokens.refresh_token), 401, 'invalid_client');
  });
});

describe('a user who is no longer active', () => {
  // The grant authority keeps the Directory's word on its user; every change is pushed to it
  // (with the users row's version) before the change answers, so there is no time to wait out.
  const block = async (userId: number) => expect((await call(`/api/v4/users/${userId}/block`, { method: 'POST', headers: ADMIN })).status).toBe(201);
  const inactive = { error: 'invalid_grant', error_description: 'The user of this authorization is no longer active.' };

  it('gets no new tokens from a refresh from the moment the block answers', async () => {
    const { app, user, tokens } = await refreshedGrantAndPendingCode();
    await block(user.id);
    const res = await refresh(app, tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(inactive);
  });

  it('cannot redeem a code from the moment the block answers (the block deleted it)', async () => {
    const { app, user, code } = await refreshedGrantAndPendingCode();
    await block(user.id);
    await expectError(await redeem(app, code), 400, 'invalid_grant');
  });

  it('is served again once unblocked, through a new authorization: the grants the block ended stay ended', async () => {
    const { app, user, tokens } = await refreshedGrantAndPendingCode();
    await block(user.id);
    expect((await call(`/api/v4/users/${user.id}/unblock`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    await expectError(await refresh(app, tokens.refresh_token), 400, 'invalid_grant');
    const browser = new Browser();
    expect((await browser.signIn(user)).status).toBe(303);
    await pairOf(await redeem(app, (await authorizeCode(browser, app)).code));
  });
});

describe('the sealed retry answer', () => {
  it('is deleted when its window is over, also when the rotation came while an earlier alarm was pending', async () => {
    const { app, user, tokens } = await refreshedGrantAndPendingCode();
    const stub = env.USERS.getByName(String(user.id));
    const sealed = () =>
      runInDurableObject(stub, (_i, state) => state.storage.sql.exec('SELECT COUNT(*) AS n FROM token_pairs WHERE retry_response IS NOT NULL').one().n);
    expect(await sealed()).toBe(1);
    advance(20);
    await pairOf(await refresh(app, tokens.refresh_token));
    expect(await sealed()).toBe(2);
    advance(12);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await sealed()).toBe(1);
    advance(20);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await sealed()).toBe(0);
  });
});
