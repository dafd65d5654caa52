import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { app as knock } from '../../worker/app';
import type { Env } from '../../worker/env';
import { advance } from './support/clock';
import { expectError } from './support/contract';
import { ADMIN, call, ORIGIN } from './support/http';
import { admin, as, createProject, person, startWorker } from './support/namespaces';
import { authorizeCode, exchange, refresh, registerApp, signedIn, tokenCall, type App, type Tokens } from './support/oauth';

/**
 * The inbox poll of an OAuth access token (as the extension polls): answered 304 from one call to
 * the user's `User` object, which owns the token pairs, without the token's KV record
 * (worker/api/inbox.ts `answerInboxPoll`). Each test below would see a 304 where it must not if
 * that call stood behind a token the KV path refuses.
 */

beforeAll(startWorker, 30_000);

const INBOX = '/api/v4/access_requests';

/** One poll through the app, counting the reads of the token store and the object calls made. */
const poll = async (headers: Record<string, string>, path = INBOX, over: Partial<Env> = {}) => {
  let kvReads = 0;
  const tokens = new Proxy(env.TOKENS, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (prop === 'get' || prop === 'getWithMetadata') kvReads++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const ctx = createExecutionContext();
  const res = await knock.fetch(new Request(`${ORIGIN}${path}`, { headers }), { ...env, TOKENS: tokens, ...over }, ctx);
  await waitOnExecutionContext(ctx);
  return { res, kvReads };
};

/** A signed-in user's OAuth token (authorization code flow) for `app`, with `scope`. */
const oauthUser = async (app: App, scope = 'api') => {
  const { user, browser } = await signedIn('poll');
  const tokens = await exchange(app, (await authorizeCode(browser, app, { scope })).code);
  return { user, browser, tokens, headers: bearer(tokens) };
};
const bearer = (tokens: Tokens) => ({ Authorization: `Bearer ${tokens.access_token}` });

/** The inbox's ETag for these headers (after one request to it, so there is something to change). */
const etagOf = async (headers: Record<string, string>) => {
  const res = await call(INBOX, { headers });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return res.headers.get('etag') ?? '';
};

describe('the inbox poll of an OAuth access token', () => {
  let app: App;

  beforeAll(async () => {
    app = await registerApp({ scopes: 'api read_api read_user' });
  });

  it('answers 304 from the user’s own object, without reading the token store; a change still answers 200', async () => {
    const owner = await oauthUser(app);
    const project = await createProject({ id: owner.user.id, username: owner.user.username, name: owner.user.username, headers: owner.headers });
    const etag = await etagOf(owner.headers);
    expect(etag).toMatch(new RegExp(`^W/"${owner.user.id}\\.[0-9]+\\.[0-9a-f]{16}o[A-Za-z0-9_-]{16,}\\.`));

    const unchanged = await poll({ ...owner.headers, 'If-None-Match': etag });
    expect([unchanged.res.status, unchanged.kvReads]).toEqual([304, 0]);
    expect(unchanged.res.headers.get('etag')).toBe(etag);
    expect(unchanged.res.headers.get('cache-control')).toBe('private, no-cache');

    const requester = await person('req');
    expect((await as(requester).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    const changed = await poll({ ...owner.headers, 'If-None-Match': etag });
    expect(changed.res.status).toBe(200);
    expect(((await changed.res.json()) as { id: number }[]).map((r) => r.id)).toEqual([requester.id]);
    expect(changed.res.headers.get('etag')).not.toBe(etag);
  });

  it('never answers a token the owner revoked, or one a refresh rotated; the new token polls on', async () => {
    const owner = await oauthUser(app);
    const etag = await etagOf(owner.headers);
    const next = await refresh(app, owner.tokens.refresh_token);
    expect(next.status).toBe(200);
    const rotated = (await next.json()) as Tokens;
    await expectError((await poll({ ...owner.headers, 'If-None-Match': etag })).res, 401, {
      error: 'invalid_token',
      error_description: 'Token was revoked. You have to re-authorize from the user.',
    });
    expect((await poll({ ...bearer(rotated), 'If-None-Match': etag })).res.status).toBe(304);

    const revoked = await tokenCall({ token: rotated.access_token }, { path: '/login/oauth/revoke', basic: [app.clientId, app.secret ?? ''] });
    expect(revoked.status).toBe(200);
    expect((await poll({ ...bearer(rotated), 'If-None-Match': etag })).res.status).toBe(401);
  });

  it('never answers an expired token', async () => {
    const owner = await oauthUser(app);
    const etag = await etagOf(owner.headers);
    advance(Number(env.ACCESS_TOKEN_TTL_SECONDS) + 1);
    await expectError((await poll({ ...owner.headers, 'If-None-Match': etag })).res, 401, {
      error: 'invalid_token',
      error_description: 'Token is expired. You can either do re-authorization or token refresh.',
    });
  });

  it('refuses a token whose scopes do not allow the inbox, as any call: 403 insufficient_scope', async () => {
    const owner = await oauthUser(app);
    const etag = await etagOf(owner.headers);
    // The same user's other grant, of another application, for read_user alone.
    const profileOnly = await registerApp({ scopes: 'read_user' });
    const narrow = await exchange(profileOnly, (await authorizeCode(owner.browser, profileOnly, { scope: 'read_user' })).code);
    const res = (await poll({ ...bearer(narrow), 'If-None-Match': etag })).res;
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
  });

  it('never answers for a blocked or deactivated user', async () => {
    for (const action of ['block', 'deactivate']) {
      const owner = await oauthUser(app);
      const etag = await etagOf(owner.headers);
      expect((await admin.post(`/users/${owner.user.id}/${action}`)).status).toBe(201);
      expect([action, (await poll({ ...owner.headers, 'If-None-Match': etag })).res.status]).toEqual([action, 401]);
    }
  });

  it('never answers a token of a deleted application', async () => {
    const doomed = await registerApp({ scopes: 'api' });
    const owner = await oauthUser(doomed);
    const etag = await etagOf(owner.headers);
    expect((await call(`/api/v4/applications/${doomed.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    expect((await poll({ ...owner.headers, 'If-None-Match': etag })).res.status).toBe(401);
  });

  it('answers a user made an administrator with every request, not their own inbox', async () => {
    const owner = await oauthUser(app);
    const etag = await etagOf(owner.headers);
    expect((await admin.put(`/users/${owner.user.id}`, { admin: true })).status).toBe(200);
    const res = (await poll({ ...owner.headers, 'If-None-Match': etag })).res;
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^W\/"all\./);
  });

  it('takes the token store’s path for another user’s token, a personal or impersonation token, and a forged mark', async () => {
    const owner = await oauthUser(app);
    const etag = await etagOf(owner.headers);
    const other = await oauthUser(app);
    const theirs = await poll({ ...other.headers, 'If-None-Match': etag });
    expect([theirs.res.status, theirs.kvReads]).toEqual([200, 1]);
    expect(theirs.res.headers.get('etag')).toMatch(new RegExp(`^W/"${other.user.id}\\.`));

    // The owner's impersonation token with the ETag of their OAuth token: a fresh answer, whose ETag says no OAuth.
    const issued = await admin.post(`/users/${owner.user.id}/impersonation_tokens`, { name: 'poll', scopes: ['api'] });
    const impersonation = { 'PRIVATE-TOKEN': ((await issued.json()) as { token: string }).token };
    const viaToken = await poll({ ...impersonation, 'If-None-Match': etag });
    expect([viaToken.res.status, viaToken.kvReads]).toEqual([200, 1]);
    const plain = viaToken.res.headers.get('etag') ?? '';
    expect(plain).toMatch(/^W\/"[0-9]+\.[0-9]+\.[0-9a-f]{16}\./);
    const again = await poll({ ...impersonation, 'If-None-Match': plain });
    expect([again.res.status, again.kvReads]).toEqual([304, 1]);

    const forged = etag.replace(/^(W\/"[0-9]+\.[0-9]+\.)[0-9a-f]{16}(o[A-Za-z0-9_-]+)\./, '$10123456789abcdef$2.');
    expect(forged).not.toBe(etag);
    const guessed = await poll({ ...owner.headers, 'If-None-Match': forged });
    expect([guessed.res.status, guessed.kvReads]).toEqual([200, 1]);

    // The owner's token with an ETag naming another grant: the object finds no such pair, so the token store answers.
    const otherGrant = etag.replace(/^(W\/"[0-9]+\.[0-9]+\.[0-9a-f]{16}o)[A-Za-z0-9_-]+\./, '$1AAAAAAAAAAAAAAAAAAAAAA.');
    expect(otherGrant).not.toBe(etag);
    const elsewhere = await poll({ ...owner.headers, 'If-None-Match': otherGrant });
    expect([elsewhere.res.status, elsewhere.kvReads]).toEqual([200, 1]);
    expect(elsewhere.res.headers.get('etag')).toBe(etag);
  });
});
