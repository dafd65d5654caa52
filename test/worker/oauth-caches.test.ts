// What the token endpoint remembers between requests (an application read from its object, the
// user as the Directory pushed it to the grant authority) never lets a deleted application or an
// inactive user obtain tokens beyond the documented bound.
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { endHoldersGrants } from '../../worker/oauth/application-grants';
import { ADMIN, authorizeCode, Browser, call, exchange, refresh, registerApp, signedIn, tokenCall, type App, type Tokens } from './support/oauth';
import { advance } from './support/clock';

const pairOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Tokens;
};
const expectError = async (res: Response, status: number, error: string) => {
  expect(res.status).toBe(status);
  expect(await res.json()).toMatchObject({ error });
};
const redeem = (app: App, code: string) => tokenCall({ client_id: app.clientId, client_secret: app.secret!, code });

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
  await env.CLIENT_HOLDERS.getByName(app.clientId).forgetApplication();
  await runInDurableObject(env.DIRECTORY.getByName('directory'), (_i, state) => {
    state.storage.sql.exec('DELETE FROM applications WHERE client_id = ?', app.clientId);
  });
  if (!endGrants) return;
  await endHoldersGrants(env, app.clientId);
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

  it('cannot redeem a code through an isolate that still remembers the application', async () => {
    const { app, code } = await refreshedGrantAndPendingCode();
    await deleteElsewhere(app, false);
    await expectError(await redeem(app, code), 401, 'invalid_client');
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
    const stub = env.GRANTS.getByName(String(user.id));
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
