import { publicOrigin } from '../config';
import type { Env } from '../env';
import { indexPartition } from '../durable/index-partition/index-partition';
import { userObject } from '../durable/user/user';
import type { RelyingParty } from '../durable/user/two-factor';
import { problems, raise } from '../errors';
import { instanceSettings } from '../store/instance-settings';
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

/**
 * Why the signed-in user must add a second factor before they may act (GitLab's
 * `require_two_factor_authentication`), in GitLab's words, or null: the instance's setting, or
 * a group whose setting requires it of its members (directly or through a subgroup). Asked only
 * of users without one: the instance's KV record and each index partition holding rows of
 * theirs, at once.
 */
export const twoFactorRequirement = async (env: Env, session: { user: { id: number; two_factor_enabled: boolean }; requirementPartitions: number[] }): Promise<string | null> => {
  if (session.user.two_factor_enabled) return null;
  const [instance, groups] = await Promise.all([
    instanceSettings(env),
    Promise.all(session.requirementPartitions.map((p) => indexPartition(env, p).twoFactorRequiredBy(session.user.id))),
  ]);
  if (instance.require_two_factor_authentication) return 'The global settings require you to enable Two-Factor Authentication for your account.';
  const group = groups.filter((g): g is string => g !== null).sort()[0];
  return group ? `The group settings for ${group} require you to enable Two-Factor Authentication for your account.` : null;
};
