import { publicOrigin } from '../config';
import type { Env } from '../env';
import { userObject } from '../durable/user/user';
import type { RelyingParty } from '../durable/user/two-factor';
import { problems, raise } from '../errors';
import { findUser } from './users';

/**
 * The relying party passkeys are made for and checked against (Web Authentication §5.1.4 and
 * §13.4.9): the origin users reach the pages at, PUBLIC_URL when set (behind a proxy the request's
 * own URL is internal), else the request's origin; the RP ID is that origin's host, so a passkey
 * made at `https://knock.example` works there only. Changing PUBLIC_URL's host orphans passkeys.
 */
export const relyingParty = (env: Env, requestUrl: string): RelyingParty => {
  const origin = publicOrigin(env, requestUrl);
  return { origin, id: new URL(origin).hostname, name: 'Knock' };
};

/** One user's second factor, in their `User` object (durable/user/two-factor.ts). */
export const twoFactorOf = (env: Env, userId: number) => userObject(env, userId).twoFactor(userId);

/**
 * An administrator's reset of a user's second factor (GitLab's `TwoFactor::DestroyService`):
 * every factor and recovery code goes. The API refuses it for administrators, as GitLab's
 * `PATCH /users/:id/disable_two_factor` does; the console's button may.
 */
export const resetTwoFactor = async (env: Env, id: number, options: { adminsToo: boolean }): Promise<void> => {
  const user = await findUser(env, id);
  if (user.admin && !options.adminsToo) raise(problems.forbidden('Two-factor authentication for admins cannot be disabled via the API. Use the Rails console'));
  if (!(await twoFactorOf(env, id).disable())) raise(problems.badRequest('400 Bad request - Two-factor authentication is not enabled for this user'));
};
