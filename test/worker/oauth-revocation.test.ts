import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { authorizeCode, call, exchange, ORIGIN, pkcePair, refresh, registerApp, signedIn, tokenCall, whoAmI, type App } from './support/oauth';
import { resetClock } from './support/clock';
import { hashSecret } from '../../worker/store/tokens';
import type { Env } from '../../worker/env';

const REVOKE = '/login/oauth/revoke';
const INTROSPECT = '/login/oauth/introspect';

const grantFor = async (app: App) => {
  const { browser, user } = await signedIn();
  if (app.secret) return { user, tokens: await exchange(app, (await authorizeCode(browser, app)).code) };
  const { verifier, challenge } = await pkcePair();
  const { code } = await authorizeCode(browser, app, { code_challenge: challenge, code_challenge_method: 'S256' });
  return { user, tokens: await exchange(app, code, { code_verifier: verifier }) };
};

const creds = (app: App) => ({ client_id: app.clientId, ...(app.secret ? { client_secret: app.secret } : {}) });

describe('revocation (RFC 7009)', () => {
  it('revoking the refresh token ends the grant and its access token', async () => {
    const app = await registerApp();
    const { tokens } = await grantFor(app);
    const res = await tokenCall({ ...creds(app), token: tokens.refresh_token, token_type_hint: 'refresh_token' }, { path: REVOKE, form: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    expect((await whoAmI(tokens.access_token)).status).toBe(401);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(400);
  });

  it('is finished by the alarm of the grant authority when a crash stopped it before KV had the tombstone', async () => {
    const app = await registerApp();
    const { user, tokens } = await grantFor(app);
    const key = `at:${await hashSecret(env, tokens.access_token)}`;
    const live = await env.TOKENS.get(key);
    const stub = env.USERS.getByName(String(user.id));
    expect((await tokenCall({ ...creds(app), token: tokens.refresh_token }, { path: REVOKE, form: true })).status).toBe(200);
    // As if the runtime stopped after the transaction that revoked the grant (which queued the
    // tombstone and set the alarm in its turn), before the KV write.
    await env.TOKENS.put(key, live!);
    await runInDurableObject(stub, async (_i, state) => {
      state.storage.sql.exec('INSERT INTO tombstone_outbox (access_hash, expires_at) VALUES (?, ?)', await hashSecret(env, tokens.access_token), tokens.created_at + tokens.expires_in);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await whoAmI(tokens.access_token)).status).toBe(401);
  });

  it('ends a new access token whose record was still being written when its grant was revoked', async () => {
    const app = await registerApp();
    const { user, tokens } = await grantFor(app);
    const stub = env.USERS.getByName(String(user.id));
    // Inside the user's object: the KV write of the next live token record waits until released
    // (tombstones go through, remembered so that the release waits for them to land), and a call
    // of `revokeGrant` is reported once its transaction has run (the method's first, synchronous step).
    let releaseWrite: (() => void) | null = null;
    let writeHeld!: () => void;
    let grantRevoked!: () => void;
    const held = new Promise<void>((resolve) => (writeHeld = resolve));
    const revoked = new Promise<void>((resolve) => (grantRevoked = resolve));
    const tombstones: Promise<void>[] = [];
    await runInDurableObject(stub, (instance) => {
      const object = instance as unknown as { env: Env; revokeGrant: (...args: unknown[]) => Promise<void> };
      const kv = object.env.TOKENS;
      const put: KVNamespace['put'] = async (key, value, options) => {
        const live = typeof value === 'string' && !(JSON.parse(value) as { revoked?: boolean }).revoked;
        if (live && releaseWrite === null) {
          await new Promise<void>((resolve) => {
            releaseWrite = resolve;
            writeHeld();
          });
        }
        const landed = kv.put(key, value, options);
        if (!live) tombstones.push(landed);
        return landed;
      };
      object.env = { ...object.env, TOKENS: Object.assign(Object.create(kv) as KVNamespace, { put }) };
      const revokeGrant = object.revokeGrant;
      object.revokeGrant = function (this: unknown, ...args: unknown[]) {
        const running = revokeGrant.apply(this, args);
        grantRevoked();
        return running;
      };
    });

    const refreshing = refresh(app, tokens.refresh_token);
    await runInDurableObject(stub, () => held);
    // The presented, now rotated, refresh token ends the grant while the new pair's record is held.
    const revoking = tokenCall({ ...creds(app), token: tokens.refresh_token }, { path: REVOKE, form: true });
    await runInDurableObject(stub, async () => {
      await revoked;
      await Promise.all(tombstones);
      releaseWrite?.();
    });
    const next = (await (await refreshing).json()) as { access_token: string };
    expect((await revoking).status).toBe(200);
    expect((await whoAmI(next.access_token)).status).toBe(401);
  });

  it('revoking the access token ends the grant too, whatever the hint says', async () => {
    const app = await registerApp();
    const { tokens } = await grantFor(app);
    const res = await tokenCall({ token: tokens.access_token, token_type_hint: 'refresh_token' }, { path: REVOKE, basic: [app.clientId, app.secret!] });
    expect(res.status).toBe(200);
    const me = await whoAmI(tokens.access_token);
    expect(await me.json()).toMatchObject({ error_description: 'Token was revoked. You have to re-authorize from the user.' });
    expect((await refresh(app, tokens.refresh_token)).status).toBe(400);
  });

  it('lets a public client revoke with its client_id (as the extension signs out)', async () => {
    const app = await registerApp({ confidential: false });
    const { tokens } = await grantFor(app);
    const res = await tokenCall({ client_id: app.clientId, token: tokens.refresh_token }, { path: REVOKE });
    expect(res.status).toBe(200);
    expect((await whoAmI(tokens.access_token)).status).toBe(401);
  });

  it('answers 200 for unknown tokens and for tokens of other clients, which stay valid', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { tokens } = await grantFor(app);
    for (const token of ['nonsense', 'knock_rt_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', tokens.access_token, tokens.refresh_token]) {
      const res = await tokenCall({ ...creds(other), token }, { path: REVOKE });
      expect(res.status).toBe(200);
    }
    expect((await whoAmI(tokens.access_token)).status).toBe(200);
    expect((await refresh(app, tokens.refresh_token)).status).toBe(200);
  });

  it('requires a token parameter and client authentication for confidential clients', async () => {
    const app = await registerApp();
    const missing = await tokenCall(creds(app), { path: REVOKE });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    const unauthenticated = await tokenCall({ client_id: app.clientId, token: 'x' }, { path: REVOKE });
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('allows CORS, for browser-based clients signing out', async () => {
    const preflight = await call(REVOKE, { method: 'OPTIONS', headers: { Origin: 'https://spa.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });
});

describe('introspection (RFC 7662)', () => {
  it('describes an active access token and an active refresh token to the client they were issued to', async () => {
    const app = await registerApp();
    const { user, tokens } = await grantFor(app);
    const access = await tokenCall({ token: tokens.access_token }, { path: INTROSPECT, basic: [app.clientId, app.secret!], form: true });
    expect(access.status).toBe(200);
    expect(access.headers.get('Cache-Control')).toBe('no-store');
    expect(await access.json()).toEqual({
      active: true,
      scope: 'api read_api',
      client_id: app.clientId,
      username: user.username,
      token_type: 'Bearer',
      exp: tokens.created_at + 28800,
      iat: tokens.created_at,
      sub: String(user.id),
      iss: ORIGIN,
    });
    const refreshInfo = await tokenCall({ ...creds(app), token: tokens.refresh_token, token_type_hint: 'refresh_token' }, { path: INTROSPECT });
    expect(await refreshInfo.json()).toEqual({
      active: true,
      scope: 'api read_api',
      client_id: app.clientId,
      username: user.username,
      token_type: 'refresh_token',
      exp: tokens.created_at + 30 * 24 * 3600,
      iat: tokens.created_at,
      sub: String(user.id),
      iss: ORIGIN,
    });
  });

  it('answers {"active":false} for unknown, rotated, revoked, expired and foreign tokens', async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { tokens } = await grantFor(app);
    const inactive = async (client: App, token: string) => {
      const res = await tokenCall({ ...creds(client), token }, { path: INTROSPECT });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ active: false });
    };
    await inactive(app, 'nonsense');
    await inactive(app, 'test-admin-token');
    await inactive(other, tokens.access_token);
    await inactive(other, tokens.refresh_token);

    const next = (await (await refresh(app, tokens.refresh_token)).json()) as typeof tokens;
    await inactive(app, tokens.access_token);
    await inactive(app, tokens.refresh_token);

    const now = Date.now();
    clock.now = () => now + 28801 * 1000;
    await inactive(app, next.access_token);
    resetClock();

    await tokenCall({ ...creds(app), token: next.refresh_token }, { path: REVOKE });
    await inactive(app, next.refresh_token);
  });

  it('is only for authenticated confidential clients', async () => {
    const app = await registerApp();
    const publicApp = await registerApp({ confidential: false });
    const { tokens } = await grantFor(publicApp);
    const bodies: Record<string, string>[] = [{ token: tokens.access_token }, { client_id: publicApp.clientId, token: tokens.access_token }, { client_id: app.clientId, client_secret: 'wrong', token: 'x' }];
    for (const body of bodies) {
      const res = await tokenCall(body, { path: INTROSPECT });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_client' });
    }
    const missing = await tokenCall(creds(app), { path: INTROSPECT });
    expect(missing.status).toBe(400);
  });
});
