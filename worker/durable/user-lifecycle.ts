import type { USER_STATES } from '../../shared/schemas';
import { problems, type Problem } from '../errors';

/**
 * GitLab's rules for blocking, unblocking, deactivating, activating and deleting a user
 * (lib/api/users.rb, Users::BlockService, Users::DeactivateService), as pure functions. The
 * Directory applies them inside the transaction that changes the users row.
 */

export type UserState = (typeof USER_STATES)[number];
export type StateAction = 'block' | 'unblock' | 'deactivate' | 'activate';

/** Who is acted on, as far as the rules care. */
interface Subject {
  id: number;
  state: UserState;
  /** The administrator behind ADMIN_TOKEN: like GitLab's internal users, never blocked, deactivated or deleted. */
  builtin: boolean;
}

/**
 * What an action does: refused, or the state it leaves and GitLab's answer (a 201 whose body is
 * `true`, `false` when there was nothing to undo, or `null` when it was already done).
 */
type Transition = { problem: Problem } | { next: UserState; answer: boolean | null };

const refuse = (problem: Problem): Transition => ({ problem });

/** GitLab's order of checks for each action, as lib/api/users.rb and its services have it. */
export const transition = (action: StateAction, user: Subject, actorId: number): Transition => {
  switch (action) {
    case 'block':
      if (user.id === actorId) return refuse(problems.forbidden('The API initiating user cannot be blocked by the API'));
      if (user.state === 'blocked') return { next: 'blocked', answer: null };
      if (user.builtin) return refuse(problems.refused(403, 'An internal user cannot be blocked'));
      return { next: 'blocked', answer: true };
    case 'unblock':
      if (user.state === 'deactivated') return refuse(problems.forbidden('Deactivated users cannot be unblocked by the API'));
      return { next: 'active', answer: user.state === 'blocked' };
    case 'deactivate':
      if (user.state === 'deactivated') return { next: 'deactivated', answer: null };
      if (user.state === 'blocked') return refuse(problems.refused(403, 'Error occurred. A blocked user cannot be deactivated'));
      if (user.builtin) return refuse(problems.refused(403, 'Internal users cannot be deactivated'));
      return { next: 'deactivated', answer: true };
    case 'activate':
      if (user.state === 'blocked') return refuse(problems.forbidden('A blocked user must be unblocked to be activated'));
      return { next: 'active', answer: user.state === 'deactivated' };
  }
};

/**
 * `DELETE /users/:id`: refused for the built-in administrator, and (409, as GitLab) while the user
 * is the only Owner of a group, `hard_delete` or not: Knock never deletes a group as a side effect.
 */
export const deletionProblem = (user: Subject, soleOwnerOf: number[]): Problem | null => {
  if (user.builtin) return problems.forbidden('The built-in administrator cannot be deleted');
  if (soleOwnerOf.length > 0) return problems.refused(409, 'User cannot be removed while is the sole-owner of a group');
  return null;
};

/** `PUT /users/:id` may not take the administrator flag from the built-in administrator. */
export const editProblem = (user: Subject, changes: { admin?: boolean }): Problem | null =>
  user.builtin && changes.admin === false ? problems.forbidden('The built-in administrator must stay an administrator') : null;
