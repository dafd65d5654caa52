import type { z } from '@hono/zod-openapi';
import type { NewUserSchema } from '../api/users';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../auth/crypto';
import { config } from '../config';
import { directory, type UserRow } from '../durable/directory/directory';
import { addressPartition, namePartition } from '../durable/sign-in/sign-in';
import type { Result } from '../durable/result';
import type { Env } from '../env';

/**
 * A new user with a password, as the sign-up page and the administrators' console make one: the
 * password stored with PBKDF2, then the Directory's rules (a username or email taken is a 409).
 */
export const createAccount = async (env: Env, input: z.output<typeof NewUserSchema>): Promise<Result<UserRow>> =>
  directory(env).createUser({
    username: input.username,
    name: input.name,
    email: input.email ?? null,
    passwordHash: await hashPassword(input.password, config(env).passwordHashIterations),
    admin: input.admin ?? false,
  });

/** A sign-in's verdict: refused for now (throttled), or the user whose password it was (null: none). */
export type PasswordCheck = { retryAfter: number } | { user: UserRow | null };

/**
 * Checks a username and password (docs/architecture.md, "Sign-in throttling"), reaching only the
 * username's `name:` partition and the address's `address:` partition: the attempt is counted
 * against the username before the password is checked and taken back on success; a failure is
 * counted against the address once known. The password is verified here, in the Worker (PBKDF2 is
 * slow; it must not hold an object), against a dummy hash for unknown users, so timing does not
 * reveal who exists.
 */
export const checkPassword = async (env: Env, username: string, password: string, address: string): Promise<PasswordCheck> => {
  const names = namePartition(env, username);
  const addresses = addressPartition(env, address);
  const [attempt, addressWait] = await Promise.all([names.beginSignIn(username), addresses.addressRetryAfter(address)]);
  if ('retryAfter' in attempt) return { retryAfter: Math.max(attempt.retryAfter, addressWait) };
  if (addressWait > 0) {
    await names.giveBack(attempt.attempt);
    return { retryAfter: addressWait };
  }
  const login = attempt.login;
  const valid = await verifyPassword(password, login?.passwordHash ?? dummyPasswordHash(config(env).passwordHashIterations));
  const user = valid && login ? login.user : null;
  await (user?.state === 'active' ? names.signedIn(username) : addresses.addressFailed(address));
  return { user };
};
