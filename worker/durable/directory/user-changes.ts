import { isoNow } from '../../clock';
import { problems } from '../../errors';
import { userIndexPartitions } from '../index-partition/index-partition';
import { deleteNamespace, namespacesBelow, renameUserNamespace, RESERVED_TOP_LEVEL, topLevelGroupExists } from '../namespace-registry';
import { fail, ok, type Result } from '../result';
import { deletionProblem, editProblem, transition, type StateAction } from '../user-lifecycle';
import { DirectoryFanOut } from './fanout-queue';
import type { NewUser, UserChanges, UserRow } from './types';
import { toUser, USER_COLUMNS, type RawUser } from './users';

const isUniqueViolation = (e: unknown): boolean => e instanceof Error && /UNIQUE constraint failed/.test(e.message);

/**
 * Creating and changing users, by GitLab's rules (user-lifecycle.ts): the row first, with an
 * outbox row, in one transaction; then the fan-out (fanout-queue.ts) before the change answers.
 */
export abstract class DirectoryUserChanges extends DirectoryFanOut {
  /**
   * A new user: the row, and in the same transaction an outbox row whose fan-out copies the login
   * record to the name's partition before this answers (so the user can sign in at once).
   * Usernames are decided here, in one table shared with top-level groups' paths (see
   * docs/decisions.md, "Usernames decided in one place").
   */
  async createUser(input: NewUser): Promise<Result<UserRow>> {
    const result = this.ctx.storage.transactionSync(() => this.insertUser(input));
    if (!result.ok) return result;
    const done = await this.settleFanOut(result.value.id);
    return done.ok ? ok(this.getUser(result.value.id) ?? result.value) : done;
  }

  private insertUser(input: NewUser): Result<UserRow> {
    // A username is also a top-level namespace path, shared with groups (as in GitLab).
    if (RESERVED_TOP_LEVEL.has(input.username.toLowerCase()) || topLevelGroupExists(this.sql, input.username)) {
      return fail(problems.conflict('Username has already been taken'));
    }
    try {
      const row = this.sql
        .exec<RawUser>(
          `INSERT INTO users (username, name, email, password_hash, admin, created_at)
           VALUES (?, ?, ?, ?, ?, ?) RETURNING ${USER_COLUMNS}`,
          input.username,
          input.name,
          input.email ?? null,
          input.passwordHash ?? null,
          input.admin ? 1 : 0,
          isoNow(),
        )
        .one();
      this.queueFanOut(row.id, row.version);
      return ok(toUser(row));
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const field = /users\.email/.test(String(e)) ? 'email' : 'username';
      return fail(problems.conflict(field === 'email' ? 'Email has already been taken' : 'Username has already been taken'));
    }
  }

  /** `PUT /users/:id` (GitLab's `Users::UpdateService`): a taken username or email is 409. */
  async updateUser(id: number, changes: UserChanges): Promise<Result<UserRow>> {
    const result = this.ctx.storage.transactionSync((): Result<UserRow> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const problem = editProblem(user, changes);
      if (problem) return fail(problem);
      const username = changes.username ?? user.username;
      if (username.toLowerCase() !== user.username.toLowerCase() && (RESERVED_TOP_LEVEL.has(username.toLowerCase()) || topLevelGroupExists(this.sql, username))) {
        return fail(problems.conflict('Username has already been taken'));
      }
      let updated: UserRow;
      try {
        updated = toUser(
          this.sql
            .exec<RawUser>(
              `UPDATE users SET username = ?, name = ?, email = ?, admin = ?, password_hash = COALESCE(?, password_hash), version = version + 1
               WHERE id = ? RETURNING ${USER_COLUMNS}`,
              username,
              changes.name ?? user.name,
              changes.email ?? user.email,
              (changes.admin ?? user.admin) ? 1 : 0,
              changes.passwordHash ?? null,
              id,
            )
            .one(),
        );
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        return fail(problems.conflict(/users\.email/.test(String(e)) ? 'Email has already been taken' : 'Username has already been taken'));
      }
      // The personal namespace is the username: its path, and its projects' full paths, follow.
      renameUserNamespace(this.sql, user.username, updated.username, updated.name);
      // A new password ends the user's browser sessions (in their `User` object) through the fan-out.
      const formerNames = updated.username.toLowerCase() === user.username.toLowerCase() ? [] : [user.username];
      this.queueFanOut(id, updated.version, changes.passwordHash !== undefined, formerNames);
      return ok(updated);
    });
    if (!result.ok) return result;
    // A new username or name moved the personal namespace and its projects.
    await this.publishRegistry();
    const done = await this.settleFanOut(id);
    return done.ok ? ok(this.getUser(id) ?? result.value) : done;
  }

  /**
   * Whether the user has a second factor, as their `User` object tells it (user/two-factor.ts):
   * a change of the row like any other, so copies (token records for `GET /user`) follow. True
   * when the row says it now (false: the user is gone, or the fan-out is still to finish).
   */
  async setTwoFactorEnabled(id: number, enabled: boolean): Promise<boolean> {
    const changed = this.ctx.storage.transactionSync(() => {
      const row = this.sql
        .exec<{ version: number }>('UPDATE users SET two_factor_enabled = ?, version = version + 1 WHERE id = ? AND two_factor_enabled != ? RETURNING version', enabled ? 1 : 0, id, enabled ? 1 : 0)
        .toArray()[0];
      if (row) this.queueFanOut(id, row.version);
      return row !== undefined;
    });
    if (changed && !(await this.settleFanOut(id)).ok) return false;
    return this.getUser(id)?.two_factor_enabled === enabled;
  }

  /**
   * `POST /users/:id/block`, `/unblock`, `/deactivate`, `/activate`, by GitLab's rules
   * (user-lifecycle.ts). The user's browser sessions, tokens, grants and pending requests follow
   * in the fan-out before this returns.
   */
  async changeUserState(id: number, action: StateAction, actorId: number): Promise<Result<{ user: UserRow; answer: boolean | null }>> {
    const result = this.commitStateChange(id, action, actorId);
    if (!result.ok) return result;
    const done = await this.settleFanOut(id);
    return done.ok ? result : done;
  }

  /** The transaction of `changeUserState`: the row, and the outbox row with its alarm. */
  private commitStateChange(id: number, action: StateAction, actorId: number): Result<{ user: UserRow; answer: boolean | null }> {
    return this.ctx.storage.transactionSync((): Result<{ user: UserRow; answer: boolean | null }> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const t = transition(action, user, actorId);
      if ('problem' in t) return fail(t.problem);
      if (t.next === user.state) return ok({ user, answer: t.answer });
      const updated = toUser(this.sql.exec<RawUser>(`UPDATE users SET state = ?, version = version + 1 WHERE id = ? RETURNING ${USER_COLUMNS}`, t.next, id).one());
      this.queueFanOut(id, updated.version);
      return ok({ user: updated, answer: t.answer });
    });
  }

  /**
   * `DELETE /users/:id`. In one transaction: the users row and the user's personal projects
   * (registry rows), refused while the user is a group's only Owner. The fan-out then ends their
   * sessions, tokens and grants and removes their memberships and pending requests.
   */
  async deleteUser(id: number): Promise<Result<null>> {
    // Groups of which the user is the only direct Owner (GitLab's `solo_owned_groups`), by the index partitions.
    const soleOwned = (await Promise.all((await userIndexPartitions(this.env, id)).map((p) => p.soleOwnedGroups(id)))).flat();
    const result = this.ctx.storage.transactionSync((): Result<null> => {
      const user = this.getUser(id);
      if (!user) return fail(problems.notFound('User'));
      const problem = deletionProblem(user, soleOwned);
      if (problem) return fail(problem);
      const personal = this.personalNamespace(user.username);
      const gone = personal === null ? [] : namespacesBelow(this.sql, personal);
      for (const projectId of gone) deleteNamespace(this.sql, 'project', projectId);
      if (personal !== null) this.sql.exec('DELETE FROM namespaces WHERE id = ?', personal);
      this.sql.exec('DELETE FROM users WHERE id = ?', id);
      this.queueFanOut(id, user.version + 1, false, [user.username]);
      return ok(null);
    });
    if (!result.ok) return result;
    // The personal projects' objects end their members and requests (the registry's outbox).
    await this.publishRegistry();
    return this.settleFanOut(id);
  }
}
