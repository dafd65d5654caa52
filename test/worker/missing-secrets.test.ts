import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import app from '../../worker';
import type { Env } from '../../worker/env';
import { ApiError } from '../../worker/errors';
import { tokenHashKey } from '../../worker/store/tokens';
import { ADMIN, ORIGIN, createUser } from './support/http';

/** Calls the Worker as deployed with `overrides` to its bindings (e.g. a secret never put). */
const callWith = async (overrides: Partial<Env>, path: string, init: RequestInit = {}) => {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
};

const NO_HASH_KEY = { TOKEN_HASH_KEY: undefined };
const MISSING_HASH_KEY = {
  message: '503 Service Unavailable: the secret TOKEN_HASH_KEY is not configured (wrangler secret put TOKEN_HASH_KEY)',
};

describe('a Worker deployed without TOKEN_HASH_KEY', () => {
  it('answers 503 naming the secret when asked to create a confidential application, not a 500', async () => {
    const res = await callWith(NO_HASH_KEY, '/api/v4/applications', {
      method: 'POST',
      headers: { ...ADMIN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'CI bot', redirect_uri: 'https://ci.example/callback', scopes: 'api' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(await res.json()).toEqual(MISSING_HASH_KEY);
  });

  it.each([
    ['an API call with a token', '/api/v4/user', { headers: { 'PRIVATE-TOKEN': 'knock_at_whatever' } }],
    ['the sign-in page', '/users/sign_in', {}],
    ['the token endpoint', '/oauth/token', { method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x' }) }],
    ['an unknown path', '/nowhere', {}],
  ] satisfies [string, string, RequestInit][])('answers 503 to %s', async (_what, path, init) => {
    const res = await callWith(NO_HASH_KEY, path, init);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(MISSING_HASH_KEY);
  });

  it('still serves the static documents, which read no secret', async () => {
    expect((await callWith(NO_HASH_KEY, '/api/v4/openapi.json')).status).toBe(200);
    expect((await callWith(NO_HASH_KEY, '/assets/knock.css')).status).toBe(200);
    expect((await callWith(NO_HASH_KEY, '/.well-known/oauth-authorization-server')).status).toBe(200);
    expect((await callWith(NO_HASH_KEY, '/.well-known/openid-configuration')).status).toBe(200);
  });

  it('has tokenHashKey raise the same 503, for code that runs outside a request (Durable Objects)', () => {
    let thrown: unknown;
    try {
      tokenHashKey({ ...env, ...NO_HASH_KEY });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status: 503, body: MISSING_HASH_KEY });
  });
});

describe('ADMIN_TOKEN', () => {
  it('is optional: without it the Worker serves everyone else', async () => {
    const user = await createUser('noadmin');
    const res = await callWith({ ADMIN_TOKEN: undefined }, '/api/v4/user', { headers: user.headers });
    expect(res.status).not.toBe(503);
    expect((await callWith({ ADMIN_TOKEN: undefined }, '/api/v4/user', { headers: ADMIN })).status).toBe(401);
  });
});
