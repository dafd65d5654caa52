import { describe, expect, it } from 'vitest';
import { deletionProblem, editProblem, transition, type StateAction, type UserState } from '../../worker/durable/user-lifecycle';

// GitLab's user moderation API (doc/api/user_moderation.md; lib/api/users.rb and
// Users::BlockService, Users::DeactivateService): what each action does in each state.
const ACTOR = 1;
const someone = (state: UserState, builtin = false) => ({ id: 2, state, builtin });

/** What the rules answer, in short: the next state and the 201 body, or the refusal's status and message. */
const outcome = (action: StateAction, user: ReturnType<typeof someone>, actorId = ACTOR) => {
  const t = transition(action, user, actorId);
  return 'problem' in t ? `${t.problem.status} ${String(t.problem.body.message)}` : `${t.next} ${JSON.stringify(t.answer)}`;
};

describe('state changes, as GitLab has them', () => {
  it.each([
    ['block', 'active', 'blocked true'],
    ['block', 'blocked', 'blocked null'],
    ['block', 'deactivated', 'blocked true'],
    ['unblock', 'blocked', 'active true'],
    ['unblock', 'active', 'active false'],
    ['unblock', 'deactivated', '403 403 Forbidden - Deactivated users cannot be unblocked by the API'],
    ['deactivate', 'active', 'deactivated true'],
    ['deactivate', 'deactivated', 'deactivated null'],
    ['deactivate', 'blocked', '403 Error occurred. A blocked user cannot be deactivated'],
    ['activate', 'deactivated', 'active true'],
    ['activate', 'active', 'active false'],
    ['activate', 'blocked', '403 403 Forbidden - A blocked user must be unblocked to be activated'],
  ] as [StateAction, UserState, string][])('%s on a user who is %s: %s', (action, state, want) => {
    expect(outcome(action, someone(state))).toBe(want);
  });

  it('refuses blocking yourself before anything else, even when already blocked', () => {
    for (const state of ['active', 'blocked', 'deactivated'] as UserState[]) {
      expect(outcome('block', someone(state), 2)).toBe('403 403 Forbidden - The API initiating user cannot be blocked by the API');
    }
  });

  it('never blocks or deactivates the built-in administrator, as GitLab spares its internal users', () => {
    expect(outcome('block', someone('active', true))).toBe('403 An internal user cannot be blocked');
    expect(outcome('deactivate', someone('active', true))).toBe('403 Internal users cannot be deactivated');
    expect(outcome('activate', someone('active', true))).toBe('active false');
  });
});

describe('deleting and editing', () => {
  it("refuses a group's only Owner (409) and the built-in administrator (403)", () => {
    expect(deletionProblem(someone('active'), [])).toBeNull();
    expect(deletionProblem(someone('blocked'), [])).toBeNull();
    expect(deletionProblem(someone('active'), [7])).toMatchObject({ status: 409, body: { message: 'User cannot be removed while is the sole-owner of a group' } });
    expect(deletionProblem(someone('active', true), [])).toMatchObject({ status: 403 });
  });

  it('keeps the built-in administrator an administrator', () => {
    expect(editProblem(someone('active', true), { admin: false })).toMatchObject({ status: 403 });
    expect(editProblem(someone('active', true), { admin: true })).toBeNull();
    expect(editProblem(someone('active'), { admin: false })).toBeNull();
  });
});
