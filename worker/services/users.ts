import { hashPassword } from '../auth/crypto';
import { config } from '../config';
import { directory } from '../durable/directory/directory';
import type { UserRow } from '../durable/directory/types';
import { unwrap } from '../durable/result';
import type { StateAction } from '../durable/user-lifecycle';
import type { Caller, Env } from '../env';
import { problems, raise } from '../errors';

/**
 * What happens to users (GitLab's `Users::UpdateService`, `BlockService`, `DeactivateService`,
 * `DestroyService`). The Directory changes the users row and, in the same transaction, queues the
 * change for every copy of the user; each of these returns once the copies agree (the user's
 * tokens, grants, sessions and pending requests), so the next request anywhere sees the change.
 */

/** A user by id, or GitLab's `404 User Not Found` (its `find_user_by_id`). */
export const findUser = async (env: Env, id: number): Promise<UserRow> => (await directory(env).getUser(id)) ?? raise(problems.notFound('User'));

export interface UserEdit {
  username?: string;
  name?: string;
  email?: string;
  password?: string;
  admin?: boolean;
}

/** `PUT /users/:id`: the fields given change; a new password ends the user's browser sessions. */
export const updateUser = async (env: Env, id: number, edit: UserEdit): Promise<UserRow> => {
  const { password, ...changes } = edit;
  const passwordHash = password === undefined ? undefined : await hashPassword(password, config(env).passwordHashIterations);
  return unwrap(await directory(env).updateUser(id, { ...changes, passwordHash }));
};

/** Block, unblock, deactivate or activate; GitLab's answer: `true`, `false` (nothing to undo) or `null` (already so). */
export const changeUserState = async (env: Env, id: number, action: StateAction, caller: Caller): Promise<boolean | null> =>
  unwrap(await directory(env).changeUserState(id, action, caller.id)).answer;

export const deleteUser = async (env: Env, id: number): Promise<void> => {
  unwrap(await directory(env).deleteUser(id));
};
