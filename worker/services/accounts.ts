import { dummyPasswordHash, hashPassword, verifyPassword } from '../auth/crypto';
import { config } from '../config';
import { directory } from '../durable/directory/directory';
import type { UserRow } from '../durable/directory/types';
import { addressPartition, namePartition } from '../durable/sign-in/sign-in';
import type { Result } from '../durable/result';
import type { Env } from '../env';

/** What a new account is made of (the API's `POST /users` and the sign-up form validate it). */
interface NewAccount {
  username: string;
  name: string;
  password: string;
  email?: string;
  admin?: boolean;
}

/**
 * A new user with a password, as the sign-up page and the administrators' console make one: the
 * password stored with PBKDF2, then the Directory's rules (a username or email taken is a 409).
 */
export const createAccount = async (env: Env, input: NewAccount): Promise<Result<UserRow>> =>
  directory(env).createUser({
    username: input.username,
    name: input.name,
    email: input.email ?? null,
    passwordHash: await hashPassword(input.password, config(env).passwordHashIterations),
    admin: input.admin ?? false,
  });

/** A sign-in's verdict: refused for now (throttled), or the user whose password it was (null: none). */
type PasswordCheck = { retryAfter: number } | { user: UserRow | null };

/**
 * Checks a username and password (docs/decisions.md, "Sign-in throttling"), reaching only the
 * username's `name:` partition and the address's `address:` partition: the attempt is counted
 * against the username before the password is checked and taken back on success; a failure is
 * counted against the address once known. The password is verified here, in the Worker (PBKDF2 is
 * slow; it must not hold an object), against a dummy hash for unknown users, so timing does not
 * reveal who exists.
 */
export const checkPassword = async (env: Env, username: string, password: string, address: string | null): Promise<PasswordCheck> => {
  const names = namePartition(env, username);
  // No trusted address (edge/client-address.ts): the per-username throttle alone.
  const addresses = address === null ? null : { stub: addressPartition(env, address), address };
  const [attempt, addressWait] = await Promise.all([names.beginSignIn(username), addresses?.stub.addressRetryAfter(addresses.address) ?? 0]);
  if ('retryAfter' in attempt) return { retryAfter: Math.max(attempt.retryAfter, addressWait) };
  if (addressWait > 0) {
    await names.giveBack(attempt.attempt);
    return { retryAfter: addressWait };
  }
  const login = attempt.login;
  const valid = await verifyPassword(password, login?.passwordHash ?? dummyPasswordHash(config(env).passwordHashIterations));
  const user = valid && login ? login.user : null;
  await (user?.state === 'active' ? names.signedIn(username) : addresses?.stub.addressFailed(addresses.address));
  return { user };
};
