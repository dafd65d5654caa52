import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dummyPasswordHash, hashPassword, MAX_PBKDF2_ITERATIONS, verifyPassword } from '../../worker/auth/crypto';
import { config } from '../../worker/config';
import type { Env } from '../../worker/env';

const withCount = (value: string | undefined) => config({ PASSWORD_HASH_ITERATIONS: value } as Env).passwordHashIterations;

describe('password hashes (PBKDF2-HMAC-SHA-256, RFC 8018)', () => {
  it('record their iteration count and verify by it, whatever count new hashes use', async () => {
    const older = await hashPassword('correct horse', 2000);
    const newer = await hashPassword('correct horse', 1000);
    expect(older.split('$').slice(0, 2)).toEqual(['pbkdf2-sha256', '2000']);
    expect(newer.split('$').slice(0, 2)).toEqual(['pbkdf2-sha256', '1000']);
    expect(await verifyPassword('correct horse', older)).toBe(true);
    expect(await verifyPassword('correct horse', newer)).toBe(true);
    expect(await verifyPassword('battery staple', older)).toBe(false);
    // The count is part of what is verified: the same salt and hash under another count do not match.
    expect(await verifyPassword('correct horse', older.replace('$2000$', '$1000$'))).toBe(false);
  });

  it('are salted: one password, two hashes', async () => {
    expect(await hashPassword('same', 1000)).not.toBe(await hashPassword('same', 1000));
  });

  it('match nothing when stored in another format or with a count Workers refuse (never an error)', async () => {
    const good = await hashPassword('pw', 1000);
    const [, , salt, hash] = good.split('$');
    for (const count of ['0', '-1', 'abc', '1.5', String(MAX_PBKDF2_ITERATIONS + 1), '']) {
      expect(await verifyPassword('pw', `pbkdf2-sha256$${count}$${salt}$${hash}`)).toBe(false);
    }
    expect(await verifyPassword('pw', 'bcrypt$2b$10$abc')).toBe(false);
    expect(await verifyPassword('pw', '')).toBe(false);
  });

  it('for an unknown user, the dummy costs what a stored one made now costs', () => {
    expect(dummyPasswordHash(1000).split('$')[1]).toBe('1000');
    expect(dummyPasswordHash(MAX_PBKDF2_ITERATIONS).split('$')[1]).toBe('100000');
  });
});

describe('PASSWORD_HASH_ITERATIONS', () => {
  it('is 100,000 in production (wrangler.toml), the most Workers allow, and when unset or not a count', () => {
    const toml = readFileSync(join(import.meta.dirname, '..', '..', 'wrangler.toml'), 'utf8');
    expect(toml).toMatch(/^PASSWORD_HASH_ITERATIONS = "100000"$/m);
    expect(MAX_PBKDF2_ITERATIONS).toBe(100_000);
    for (const value of [undefined, '', '0', '-5', '1e3x', '2.5', '100001', 'many']) expect(withCount(value), String(value)).toBe(100_000);
  });

  it('may be lowered (the tests run at 1,000)', () => {
    expect(withCount('1000')).toBe(1000);
    expect(withCount('1')).toBe(1);
    expect(withCount('100000')).toBe(100_000);
  });
});
