// The keys Knock keeps itself: the JWKS, rotation on a schedule (the clock moved, never slept),
// and a rotation at once after a leak.
import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { call } from './support/http';
import { admin, as, person, startWorker } from './support/namespaces';
import { Browser, signedIn } from './support/oauth';
import { fetchJwks, openidApp, signInWithKnock, verifyIdToken } from './support/oidc';
import { dumpTables } from './support/storage';

beforeAll(startWorker, 30_000);

const DAY = 24 * 3600;
const keysStub = () => env.SIGNING_KEYS.getByName('keys') as unknown as DurableObjectStub;
const kids = (jwks: JSONWebKeySet) => jwks.keys.map((k) => k.kid);

/** A new key that signs from now, as an administrator rotates after a leak (`withdraw`) or otherwise. */
const rotateNow = async (withdraw: boolean) => {
  const res = await admin.post('/admin/signing_keys/rotate', { withdraw });
  expect(res.status).toBe(201);
  return (await res.json()) as { kid: string; signs_from: string; published_until: string | null }[];
};

describe('the JWKS (RFC 7517 §5) at GitLab’s path', () => {
  it('publishes RS256 public keys with their kid, the same at both paths, never a private part, from memory', async () => {
    const jwks = await fetchJwks();
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    }
    const res = await call('/login/oauth/discovery/keys');
    expect(res.headers.get('Content-Type')).toBe('application/json');
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=300');
    expect(await res.json()).toEqual(jwks);
  });

  it('keeps private keys only sealed', async () => {
    await fetchJwks();
    const { keys } = await dumpTables(keysStub());
    expect(keys.length).toBeGreaterThan(0);
    for (const row of keys) {
      expect(JSON.parse(row.public_jwk as string)).not.toHaveProperty('d');
      expect(row.sealed_private_jwk).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(row.sealed_private_jwk as string).not.toContain('"d"');
    }
  });
});

describe('rotation on a schedule', () => {
  it('publishes the next key a day before it signs, signs with it after 30 days, and drops the old one once its last token has expired', async () => {
    const app = await openidApp();
    const { user } = await signedIn('rot');
    // A fresh browser each time: sessions last 7 days, the clock moves by weeks.
    const signIn = async () => {
      const browser = new Browser();
      expect((await browser.signIn(user)).status).toBe(303);
      return signInWithKnock(browser, app);
    };
    const [first] = await rotateNow(true);

    const early = await signIn();
    expect(decodeProtectedHeader(early.id_token!).kid).toBe(first.kid);
    expect(kids(await fetchJwks())).toEqual([first.kid]);

    // Day 29: the next key is published, the first still signs.
    advance(29 * DAY + 60);
    const published = await fetchJwks();
    expect(published.keys).toHaveLength(2);
    const next = kids(published).find((k) => k !== first.kid)!;
    const stillFirst = await signIn();
    expect((await verifyIdToken(stillFirst.id_token!, app, published)).kid).toBe(first.kid);

    // Day 30: the next key signs; a token the first signed a moment ago still verifies.
    advance(DAY);
    const rotated = await signIn();
    const both = await fetchJwks();
    expect((await verifyIdToken(rotated.id_token!, app, both)).kid).toBe(next);
    expect(kids(both).sort()).toEqual([first.kid, next].sort());

    // Eleven minutes later the first key's last token has expired: it leaves the JWKS.
    advance(11 * 60);
    expect(kids(await fetchJwks())).toEqual([next]);
    expect((await verifyIdToken((await signIn()).id_token!, app)).kid).toBe(next);
  });

  it('is kept by the alarm when nobody reads the keys', async () => {
    const [first] = await rotateNow(true);
    advance(29 * DAY + 60);
    await runDurableObjectAlarm(keysStub());
    const { keys } = await dumpTables(keysStub());
    expect(keys.map((k) => k.kid)).toContain(first.kid);
    expect(keys).toHaveLength(2);
  });
});

describe('rotation at once (docs/deploy.md)', () => {
  it('after a leak: the new key signs at once and every earlier key leaves the JWKS, so what it signed stops verifying', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('leak');
    const before = await signInWithKnock(browser, app);
    const leaked = decodeProtectedHeader(before.id_token!).kid!;
    const after = await rotateNow(true);
    expect(after).toHaveLength(1);
    expect(after[0].kid).not.toBe(leaked);
    expect(after[0].published_until).toBeNull();
    const jwks = await fetchJwks();
    expect(kids(jwks)).toEqual([after[0].kid]);
    await expect(verifyIdToken(before.id_token!, app, jwks)).rejects.toThrow();
    expect((await verifyIdToken((await signInWithKnock(browser, app)).id_token!, app, jwks)).kid).toBe(after[0].kid);
  });

  it('without withdraw: the new key signs at once and the earlier one stays published ten minutes', async () => {
    const [old] = await rotateNow(true);
    const keys = await rotateNow(false);
    expect(keys.map((k) => k.kid)).toContain(old.kid);
    const kept = keys.find((k) => k.kid === old.kid)!;
    expect(Date.parse(kept.published_until!) - Date.parse(keys.find((k) => k.kid !== old.kid)!.signs_from)).toBe(10 * 60 * 1000);
  });

  it('is for administrators only', async () => {
    const bob = await person('bob');
    const res = await as(bob).post('/admin/signing_keys/rotate', { withdraw: true });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: '403 Forbidden' });
  });
});
