import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../worker/auth/crypto';
import { config } from '../../worker/config';
import type { Directory } from '../../worker/durable/directory/directory';
import type { SignIn } from '../../worker/durable/sign-in/sign-in';
import { partitionCount, partitionName, partitionOfName } from '../../worker/durable/partitions';
import { ADMIN, Browser, call, createUser, jsonBody, unique } from './support/http';

/**
 * Sign-in reaches the username's `name:` partition and the address's `address:` partition (and the
 * user's `User` object for the session), never the Directory: each partition's copy follows every
 * change of the user, from the creation on, before the change answers.
 */

const count = () => partitionCount(env);
const partitionOf = (username: string) => env.SIGN_IN.getByName(partitionName('name', partitionOfName(username, count())));

/** The rows a `name:` partition holds for a user. */
const copyOf = (username: string, userId: number) =>
  runInDurableObject(partitionOf(username), (_i: SignIn, state) =>
    state.storage.sql.exec<{ username: string | null; password_hash: string | null; version: number }>('SELECT username, password_hash, version FROM logins WHERE user_id = ?', userId).toArray(),
  );

/** A username whose partition is not that of `other`, so a rename moves the record between objects. */
const nameElsewhere = (prefix: string, other: string): string => {
  for (;;) {
    const name = unique(prefix);
    if (partitionOfName(name, count()) !== partitionOfName(other, count())) return name;
  }
};

const signInStatus = async (username: string, password: string) => (await new Browser().signIn({ username, password })).status;

const directoryStub = () => env.DIRECTORY.getByName('directory');

describe("the name partition's copy follows the user", () => {
  it('has the user as soon as the creation answered, and moves with a rename', async () => {
    const user = await createUser('copy');
    expect(await copyOf(user.username, user.id)).toEqual([{ username: user.username, password_hash: expect.any(String), version: 1 }]);
    expect(await signInStatus(user.username, user.password)).toBe(303);

    const renamed = nameElsewhere('moved', user.username);
    expect((await call(`/api/v4/users/${user.id}`, jsonBody({ username: renamed }, ADMIN, 'PUT'))).status).toBe(200);
    // The old name's partition keeps only that the name left (so an older copy can never come back).
    expect(await copyOf(user.username, user.id)).toEqual([{ username: null, password_hash: null, version: 2 }]);
    expect(await copyOf(renamed, user.id)).toEqual([{ username: renamed, password_hash: expect.any(String), version: 2 }]);
    expect(await signInStatus(user.username, user.password)).toBe(401);
    expect(await signInStatus(renamed, user.password)).toBe(303);
  });

  it('takes a new password, a block and an unblock, and forgets a deleted user', async () => {
    const user = await createUser('pw');
    expect((await call(`/api/v4/users/${user.id}`, jsonBody({ password: 'a-new-long-password' }, ADMIN, 'PUT'))).status).toBe(200);
    expect(await signInStatus(user.username, user.password)).toBe(401);
    expect(await signInStatus(user.username, 'a-new-long-password')).toBe(303);

    expect((await call(`/api/v4/users/${user.id}/block`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    expect(await signInStatus(user.username, 'a-new-long-password')).toBe(403);
    expect((await call(`/api/v4/users/${user.id}/unblock`, { method: 'POST', headers: ADMIN })).status).toBe(201);
    expect(await signInStatus(user.username, 'a-new-long-password')).toBe(303);

    expect((await call(`/api/v4/users/${user.id}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
    expect(await copyOf(user.username, user.id)).toEqual([{ username: null, password_hash: null, version: Number.MAX_SAFE_INTEGER }]);
    expect(await signInStatus(user.username, 'a-new-long-password')).toBe(401);
  });

  it('takes only newer versions, and gives a name to the user the Directory gave it to last', async () => {
    const stub = env.SIGN_IN.getByName(partitionName('name', 0));
    const name = unique('race');
    const row = (id: number, version: number, username: string) => ({
      userId: id,
      version,
      login: { user: { id, username, name: username, email: null, admin: false, state: 'active' as const, created_at: '2026-01-01T00:00:00Z', version, builtin: false, two_factor_enabled: false }, passwordHash: `hash-${id}-${version}` },
    });
    const held = () =>
      runInDurableObject(stub, (_i: SignIn, state) => state.storage.sql.exec('SELECT user_id, username, version FROM logins WHERE user_id IN (-1, -2) ORDER BY user_id DESC').toArray());
    await stub.applyLogins([row(-1, 3, name)]);
    await stub.applyLogins([row(-1, 2, `${name}-older`)]);
    expect(await held()).toEqual([{ user_id: -1, username: name, version: 3 }]);
    // User -1 was renamed away from the name and user -2 took it; -2's copy arrives first.
    await stub.applyLogins([row(-2, 1, name)]);
    expect(await held()).toEqual([
      { user_id: -1, username: null, version: 3 },
      { user_id: -2, username: name, version: 1 },
    ]);
    // A name that left stays gone for the versions before its leaving.
    await stub.applyLogins([{ userId: -2, version: 5, login: null }, row(-2, 4, name)]);
    expect(await held()).toEqual([
      { user_id: -1, username: null, version: 3 },
      { user_id: -2, username: null, version: 5 },
    ]);
  });
});

describe('a username its partition does not hold', () => {
  it('is no user\'s: the Directory is not asked, even when it has a row no fan-out copied', async () => {
    // A users row written behind the fan-out's back, as no code path does: every creation's
    // fan-out reaches the name's partition before it answers.
    const username = unique('unseen');
    const hash = await hashPassword('an-unseen-password', config(env).passwordHashIterations);
    const id = await runInDurableObject(directoryStub(), (_i: Directory, state) =>
      state.storage.sql.exec<{ id: number }>('INSERT INTO users (username, name, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id', username, username, hash, new Date().toISOString()).one().id,
    );
    expect(await signInStatus(username, 'an-unseen-password')).toBe(401);
    expect(await copyOf(username, id)).toEqual([]);
  });
});
