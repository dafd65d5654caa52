import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../worker/clock';
import { clientHoldersOf } from '../../worker/durable/client-holders/client-holders';
import { hashSecret } from '../../worker/store/tokens';
import { authorizeCode, call, ADMIN, exchange, refresh, registerApp, signedIn, tokenCall, whoAmI, type App, type Tokens } from './support/oauth';
import { advance, freeze } from './support/clock';

const REVOKED = { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' };
const EXPIRED = { error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' };

const expectRevoked = async (accessToken: string) => {
  const res = await whoAmI(accessToken);
  expect(res.status).toBe(401);
  expect(await res.json()).toEqual(REVOKED);
};
const expectWorks = async (accessToken: string) => expect((await whoAmI(accessToken)).status).toBe(200);
const expectInvalidGrant = async (res: Response) => {
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
};
const pairOf = async (res: Response) => {
  expect(res.status).toBe(200);
  return (await res.json()) as Tokens;
};

const grantFor = async (app?: App) => {
  const theApp = app ?? (await registerApp());
  const { browser, user } = await signedIn();
  const { code } = await authorizeCode(browser, theApp);
  return { app: theApp, user, browser, code, tokens: await exchange(theApp, code) };
};

describe('codes are single use (RFC 6749 §4.1.2)', () => {
  it('refuses a replayed code and revokes every token issued from it', async () => {
    const { app, code, tokens } = await grantFor();
    await expectWorks(tokens.access_token);
    const replay = await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri });
    await expectInvalidGrant(replay);
    await expectRevoked(tokens.access_token);
    await expectInvalidGrant(await refresh(app, tokens.refresh_token));
  });

  it('revokes tokens obtained by refreshing too, when the code is replayed later', async () => {
    const { app, code, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    await expectWorks(next.access_token);
    await expectInvalidGrant(await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri }));
    await expectRevoked(next.access_token);
    await expectInvalidGrant(await refresh(app, next.refresh_token));
  });

  it('gives exactly one token pair to 50 concurrent redemptions of one code', async () => {
    const app = await registerApp();
    const { browser } = await signedIn();
    const { code } = await authorizeCode(browser, app);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(49);
    const winner = (await answers[statuses.indexOf(200)].json()) as Tokens;
    // The other 49 were replays: the one pair issued from the code is revoked as well.
    await expectRevoked(winner.access_token);
  });
});

describe('refresh tokens rotate (RFC 9700 §4.14.2)', () => {
  it('each refresh returns a new pair and ends the old pair', async () => {
    const { app, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.access_token).not.toBe(tokens.access_token);
    await expectRevoked(tokens.access_token);
    await expectWorks(next.access_token);
    const third = await pairOf(await refresh(app, next.refresh_token));
    await expectRevoked(next.access_token);
    await expectWorks(third.access_token);
  });

  it('says an old access token that had expired before the refresh is expired, not revoked', async () => {
    const { app, tokens } = await grantFor();
    advance(28801);
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    const old = await whoAmI(tokens.access_token);
    expect(old.status).toBe(401);
    expect(await old.json()).toEqual(EXPIRED);
    await expectWorks(next.access_token);
  });

  it('revokes the whole grant when a rotated refresh token comes back after its successor was used', async () => {
    const { app, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    const third = await pairOf(await refresh(app, next.refresh_token));
    // The first refresh token again (a thief, or a confused client): the grant ends.
    await expectInvalidGrant(await refresh(app, tokens.refresh_token));
    await expectRevoked(third.access_token);
    await expectInvalidGrant(await refresh(app, third.refresh_token));
  });

  it('revokes the whole grant when a rotated refresh token comes back after 30 seconds', async () => {
    const { app, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    advance(31);
    await expectInvalidGrant(await refresh(app, tokens.refresh_token));
    await expectRevoked(next.access_token);
    await expectInvalidGrant(await refresh(app, next.refresh_token));
  });

  it('ends the tokens of a grant a replay revoked even when a crash stopped it before KV had the tombstones: the alarm writes them', async () => {
    const { app, user, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    const key = `at:${await hashSecret(env, next.access_token)}`;
    const live = await env.TOKENS.get(key);
    advance(31);
    await expectInvalidGrant(await refresh(app, tokens.refresh_token));
    // As if the runtime stopped after the transaction that revoked the grant, before its KV write:
    // the token's record as it was, its tombstone still queued.
    await env.TOKENS.put(key, live!);
    const stub = env.USERS.getByName(String(user.id));
    await runInDurableObject(stub, async (_i, state) => {
      state.storage.sql.exec('INSERT INTO tombstone_outbox (access_hash, expires_at) VALUES (?, ?)', await hashSecret(env, next.access_token), next.created_at + next.expires_in);
    });
    await expectWorks(next.access_token);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await expectRevoked(next.access_token);
    expect(await runInDurableObject(stub, (_i, state) => state.storage.sql.exec('SELECT COUNT(*) AS n FROM tombstone_outbox').one().n)).toBe(0);
  });

  it('answers an identical retry within 30 seconds with the same pair (a lost response must not log the user out)', async () => {
    const { app, tokens } = await grantFor();
    freeze();
    const first = await pairOf(await refresh(app, tokens.refresh_token));
    advance(29);
    const retry = await pairOf(await refresh(app, tokens.refresh_token));
    expect(retry).toEqual(first);
    await expectWorks(first.access_token);
    // The retry did not start a second pair: the successor rotates normally.
    const next = await pairOf(await refresh(app, first.refresh_token));
    await expectWorks(next.access_token);
    // Now that the successor was used, the old token is a reuse: the grant ends.
    await expectInvalidGrant(await refresh(app, tokens.refresh_token));
    await expectRevoked(next.access_token);
  });

  it('answers the retry of a refresh whose KV writes were lost (a crash after the rotation) with tokens that work as answered', async () => {
    const { app, tokens } = await grantFor();
    const key = async (token: string) => `at:${await hashSecret(env, token)}`;
    const before = await env.TOKENS.get(await key(tokens.access_token));
    const first = await pairOf(await refresh(app, tokens.refresh_token));
    // As if the runtime stopped after the rotation's transaction, before its KV writes: the old
    // token's record as it was, none for the new one. The client saw no answer and retries.
    await env.TOKENS.put(await key(tokens.access_token), before!);
    await env.TOKENS.delete(await key(first.access_token));
    const retry = await pairOf(await refresh(app, tokens.refresh_token));
    expect(retry).toEqual(first);
    await expectWorks(retry.access_token);
    await expectRevoked(tokens.access_token);
  });

  it('treats a retry that differs (another scope) as reuse', async () => {
    const { app, tokens } = await grantFor();
    const first = await pairOf(await refresh(app, tokens.refresh_token));
    await expectInvalidGrant(await refresh(app, tokens.refresh_token, { scope: 'read_api' }));
    await expectRevoked(first.access_token);
  });

  it('gives 50 concurrent refreshes of one token the same single pair', async () => {
    const { app, tokens } = await grantFor();
    const answers = await Promise.all(Array.from({ length: 50 }, () => refresh(app, tokens.refresh_token)));
    const bodies = await Promise.all(answers.map(pairOf));
    expect(new Set(bodies.map((b) => b.access_token)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.refresh_token)).size).toBe(1);
    await expectWorks(bodies[0].access_token);
    await expectRevoked(tokens.access_token);
    expect((await refresh(app, bodies[0].refresh_token)).status).toBe(200);
  });
});

describe('access tokens', () => {
  it('expire after 8 hours with the contract body and a Bearer challenge', async () => {
    freeze();
    const { tokens } = await grantFor();
    expect(tokens.expires_in).toBe(28800);
    advance(28799);
    await expectWorks(tokens.access_token);
    advance(2);
    const res = await whoAmI(tokens.access_token, 'private');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(EXPIRED);
    expect(res.headers.get('WWW-Authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it('carry the user and the scope the grant was given, in one KV record', async () => {
    const { app, user, tokens } = await grantFor();
    const me = (await (await whoAmI(tokens.access_token)).json()) as { id: number; username: string };
    expect(me).toMatchObject({ id: user.id, username: user.username });
    const hash = await hashSecret(env, tokens.access_token);
    const record = await env.TOKENS.get(`at:${hash}`, 'json');
    expect(record).toMatchObject({ userId: user.id, username: user.username, scopes: ['api', 'read_api'], clientId: app.clientId, grantId: expect.any(String) });
    // KV forgets the token when it expires.
    const { keys } = await env.TOKENS.list({ prefix: `at:${hash}` });
    expect(keys[0].expiration).toBe(tokens.created_at + 28800);
  });
});

describe('deleting an application', () => {
  it('ends every grant made to it and every token issued under them', async () => {
    const app = await registerApp();
    const a = await grantFor(app);
    const b = await grantFor(app);
    const bystander = await grantFor();
    const res = await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN });
    expect(res.status).toBe(204);
    await expectRevoked(a.tokens.access_token);
    await expectRevoked(b.tokens.access_token);
    await expectWorks(bystander.tokens.access_token);
    const again = await refresh(app, a.tokens.refresh_token);
    expect(again.status).toBe(401);
  });

  it('also ends what a user obtained again through the remembered consent, and forgets codes not yet redeemed', async () => {
    const app = await registerApp();
    const { browser, user, tokens } = await grantFor(app);
    // The later authorizations answer at once, from the remembered consent.
    const again = await exchange(app, (await authorizeCode(browser, app)).code);
    await authorizeCode(browser, app);
    const other = await grantFor(app);
    expect(await clientHoldersOf(env, app.clientId).list()).toEqual([user.id, other.user.id].sort((x, y) => x - y));
    expect((await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    for (const t of [tokens, again, other.tokens]) await expectRevoked(t.access_token);
    const left = await runInDurableObject(env.USERS.getByName(String(user.id)), (_i, state) => ({
      consents: state.storage.sql.exec('SELECT COUNT(*) AS n FROM consents').one().n,
      pendingCodes: state.storage.sql.exec('SELECT COUNT(*) AS n FROM codes WHERE grant_id IS NULL').one().n,
    }));
    expect(left).toEqual({ consents: 0, pendingCodes: 0 });
    expect(await clientHoldersOf(env, app.clientId).list()).toEqual([]);
  });
});

describe('storage holds only keyed hashes', () => {
  it('keeps the sealed retry answer for the 30-second window only', async () => {
    const { app, user, tokens } = await grantFor();
    await pairOf(await refresh(app, tokens.refresh_token));
    const stub = env.USERS.getByName(String(user.id));
    const sealed = () =>
      runInDurableObject(stub, (_i, state) => state.storage.sql.exec('SELECT COUNT(*) AS n FROM token_pairs WHERE retry_response IS NOT NULL').one().n);
    expect(await sealed()).toBe(1);
    advance(31);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await sealed()).toBe(0);
  });

  it('keeps no code, refresh token or access token in clear in the grant authority, even in the retry answer', async () => {
    const { app, user, code, tokens } = await grantFor();
    const next = await pairOf(await refresh(app, tokens.refresh_token));
    const secrets = [code, tokens.access_token, tokens.refresh_token, next.access_token, next.refresh_token].map((s) => s.replace(/^knock_(at|rt|ac)_[0-9a-z]+_/, ''));
    const stub = env.USERS.getByName(String(user.id));
    const dump = await runInDurableObject(stub, (_instance, state) => {
      const rows: string[] = [];
      for (const table of ['codes', 'grants', 'token_pairs', 'consents']) {
        for (const row of state.storage.sql.exec(`SELECT * FROM ${table}`).toArray()) {
          rows.push(
            JSON.stringify(row, (_k, v) => (v instanceof ArrayBuffer ? new TextDecoder('latin1').decode(v) : v)),
          );
        }
      }
      return rows.join('\n');
    });
    expect(dump).toMatch(/[0-9a-f]{64}/);
    expect(secrets.every((s) => s.length >= 43)).toBe(true);
    for (const secret of secrets) expect(dump).not.toContain(secret);
  });
});
