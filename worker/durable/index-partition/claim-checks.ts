import type { Env } from '../../env';
import type { MembershipChange } from '../namespace-registry';
import { userObject } from '../user/user';

/**
 * Telling a user's `User` object that one of their group memberships ended or went down, so the
 * applications whose tokens named it are logged out (User.checkGroupClaims, OpenID Connect
 * Back-Channel Logout 1.0). A durable outbox (`claim_checks`), written in the transaction that
 * applies the change, sent before the push answers and by the alarm after a failure, as the
 * managers' inbox shares are. Only groups: projects are never in the group claims.
 */

/**
 * A user already queued is queued again: a check sent before this loss was applied may have read
 * the claims before it, so its answer must not take the user off the queue (`sendClaimChecks`).
 */
const ANOTHER_LOSS = 'ON CONFLICT (user_id) DO UPDATE SET losses = losses + 1';

/** Inside the push's transaction, before the changes: each changed member's level now (0 for none). */
export const levelsBefore = (sql: SqlStorage, namespaceId: number, members: MembershipChange[]): Map<number, number> =>
  new Map(
    members.map((c) => [
      c.userId,
      sql.exec<{ access_level: number }>('SELECT access_level FROM memberships WHERE user_id = ? AND namespace_id = ?', c.userId, namespaceId).toArray()[0]?.access_level ?? 0,
    ]),
  );

/** Inside the same transaction, after the changes: queues each member whose level went down (a removal, an expiry, a demotion). */
export const queueLowered = (sql: SqlStorage, namespaceId: number, before: Map<number, number>): void => {
  for (const [userId, was] of before) {
    const now = sql.exec<{ access_level: number }>('SELECT access_level FROM memberships WHERE user_id = ? AND namespace_id = ?', userId, namespaceId).toArray()[0]?.access_level ?? 0;
    if (now < was) sql.exec(`INSERT INTO claim_checks (user_id) VALUES (?) ${ANOTHER_LOSS}`, userId);
  }
};

/** Inside the transaction that deletes a group: every member loses it. */
export const queueAllMembers = (sql: SqlStorage, namespaceId: number): void => {
  sql.exec(`INSERT INTO claim_checks (user_id) SELECT user_id FROM memberships WHERE namespace_id = ? AND access_level > 0 ${ANOTHER_LOSS}`, namespaceId);
};

export const claimChecksWaiting = (sql: SqlStorage): boolean => sql.exec('SELECT 1 FROM claim_checks LIMIT 1').toArray().length > 0;

/**
 * Tells each queued user's `User`; true when all were told (the rest stay queued). A user whose
 * membership was lost again while the check was under way stays queued (`losses` moved on), and
 * is told again: that check may have read the claims before the loss.
 */
export const sendClaimChecks = async (env: Env, sql: SqlStorage): Promise<boolean> => {
  const queued = sql.exec<{ user_id: number; losses: number }>('SELECT user_id, losses FROM claim_checks LIMIT 50').toArray();
  const sent = await Promise.allSettled(queued.map((q) => userObject(env, q.user_id).checkGroupClaims()));
  const told = queued.filter((_, i) => sent[i].status === 'fulfilled');
  for (const t of told) sql.exec('DELETE FROM claim_checks WHERE user_id = ? AND losses = ?', t.user_id, t.losses);
  return told.length === queued.length;
};
