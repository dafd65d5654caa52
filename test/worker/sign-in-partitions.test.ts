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
 * user's grant authority for the session), never the Directory once the copy of earlier users'
 * login records is complete: each partition's copy follows every change of the user, and a
 * deployment whose users were made before the partitions existed keeps signing them in.
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
      login: { user: { id, username, name: username, email: null, admin: false, state: 'active' as const, created_at: '2026-01-01T00:00:00Z', version, builtin: false }, passwordHash: `hash-${id}-${version}` },
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

describe('users made before sign-in moved to the partitions', () => {
  /** A users row written as the version before wrote it: in the Directory only, no copy anywhere. */
  const oldUsers = async (n: number, password: string): Promise<{ id: number; username: string }[]> => {
    const hash = await hashPassword(password, config(env).passwordHashIterations);
    const names = Array.from({ length: n }, () => unique('old'));
    return runInDurableObject(directoryStub(), (_i: Directory, state) =>
      names.map((username) => ({
        username,
        id: state.storage.sql
          .exec<{ id: number }>('INSERT INTO users (username, name, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id', username, username, hash, new Date().toISOString())
          .one().id,
      })),
    );
  };

  /** The state of a deployment that has not run the copy yet: no partition complete, no cursor. */
  const beforeTheCopy = async () => {
    // No alarm left from earlier tests: the passes below are the test's own.
    await runInDurableObject(directoryStub(), async (_i: Directory, state) => {
      state.storage.sql.exec("DELETE FROM settings WHERE name = 'logins_backfill'");
      await state.storage.deleteAlarm();
    });
    await Promise.all(
      Array.from({ length: count() }, (_, p) =>
        runInDurableObject(env.SIGN_IN.getByName(partitionName('name', p)), (_i: SignIn, state) => {
          state.storage.sql.exec("DELETE FROM settings WHERE name = 'complete'");
        }),
      ),
    );
  };

  const backfillState = () =>
    runInDurableObject(directoryStub(), (_i: Directory, state) => state.storage.sql.exec<{ value: string }>("SELECT value FROM settings WHERE name = 'logins_backfill'").toArray()[0]?.value ?? null);

  it('signs them in before the copy ran (the partition asks the Directory once and keeps the answer)', async () => {
    await beforeTheCopy();
    const [old] = await oldUsers(1, 'an-old-password');
    expect(await copyOf(old.username, old.id)).toEqual([]);
    expect(await signInStatus(old.username, 'an-old-password')).toBe(303);
    expect(await copyOf(old.username, old.id)).toEqual([{ username: old.username, password_hash: expect.any(String), version: 1 }]);
    expect(await signInStatus(old.username, 'a-wrong-password')).toBe(401);
  });

  it("copies them all from the Directory's alarm, resuming from its cursor; then a name a partition does not hold asks no one", async () => {
    await beforeTheCopy();
    const old = await oldUsers(230, 'an-old-password');
    const alarm = () => runInDurableObject(directoryStub(), (instance: Directory) => instance.alarm());

    await alarm();
    // One batch, and the cursor after it: a crash here resumes from there.
    const cursor = Number(await backfillState());
    expect(cursor).toBeGreaterThan(0);
    expect(cursor).toBeLessThan(old[old.length - 1].id);
    expect(await copyOf(old[old.length - 1].username, old[old.length - 1].id)).toEqual([]);

    for (let pass = 0; pass < 10 && (await backfillState()) !== 'done'; pass++) await alarm();
    expect(await backfillState()).toBe('done');
    for (const u of [old[0], old[115], old[old.length - 1]]) {
      expect(await copyOf(u.username, u.id)).toEqual([{ username: u.username, password_hash: expect.any(String), version: 1 }]);
    }
    expect(await signInStatus(old[old.length - 1].username, 'an-old-password')).toBe(303);

    // Complete: a user the partition does not hold is no user, without asking the Directory,
    // which here has one (written behind the fan-out's back, as no code path does).
    const [unseen] = await oldUsers(1, 'an-old-password');
    expect(await signInStatus(unseen.username, 'an-old-password')).toBe(401);
    expect(await copyOf(unseen.username, unseen.id)).toEqual([]);
  });
});
