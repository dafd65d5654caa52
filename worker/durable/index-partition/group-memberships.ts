import { MINIMAL_ACCESS, OWNER } from '../../../shared/access-levels';

/** A user's groups in one index partition, as OpenID Connect's group claims name them (by full path). */
export interface GroupMemberships {
  /** Every group the user is a member of, directly or through an ancestor group. */
  reached: string[];
  /** The groups the user is a direct member of, with the level there. */
  direct: { fullPath: string; accessLevel: number }[];
}

/**
 * The user's groups in this partition's trees (a tree is whole in its partition, so what a
 * membership reaches below it is here too), as GitLab's claims count them: memberships of Guest
 * and above (GitLab's `user.groups` leaves out Minimal access), not yet expired (an `expires_at`
 * of today or earlier has ended, as the members lists judge it), and for `reached` every subgroup
 * below them (GitLab's `membership_groups`). Groups whose registry row has not been copied here
 * (placeholders without a path) are left out.
 */
export const groupMembershipsOf = (sql: SqlStorage, userId: number, today: string): GroupMemberships => {
  const direct = sql
    .exec<{ full_path: string; access_level: number }>(
      `SELECT n.full_path, m.access_level FROM memberships m JOIN namespaces n ON n.id = m.namespace_id
       WHERE m.user_id = ? AND n.kind = 'group' AND n.full_path != '' AND m.access_level > ${MINIMAL_ACCESS}
         AND (m.expires_at IS NULL OR m.expires_at > ?)
       ORDER BY n.full_path`,
      userId,
      today,
    )
    .toArray();
  const reached = sql
    .exec<{ full_path: string }>(
      `WITH RECURSIVE reached(id) AS (
         SELECT m.namespace_id FROM memberships m JOIN namespaces n ON n.id = m.namespace_id
         WHERE m.user_id = ? AND n.kind = 'group' AND m.access_level > ${MINIMAL_ACCESS} AND (m.expires_at IS NULL OR m.expires_at > ?)
         UNION
         SELECT c.id FROM namespaces c JOIN reached r ON c.parent_id = r.id WHERE c.kind = 'group'
       )
       SELECT n.full_path FROM namespaces n JOIN reached r ON r.id = n.id WHERE n.full_path != '' ORDER BY n.full_path`,
      userId,
      today,
    )
    .toArray();
  return { reached: reached.map((r) => r.full_path), direct: direct.map((r) => ({ fullPath: r.full_path, accessLevel: r.access_level })) };
};

/**
 * The group here whose setting requires the user to have a second factor (GitLab's group
 * `require_two_factor_authentication`, which covers the members of its subgroups too): the first
 * by full path among the groups the user is a member of (not expired) and their ancestors; null
 * when none does. Project memberships alone require nothing, as in GitLab.
 */
export const twoFactorRequiredBy = (sql: SqlStorage, userId: number, today: string): string | null =>
  sql
    .exec<{ full_path: string }>(
      `WITH RECURSIVE up(id) AS (
         SELECT m.namespace_id FROM memberships m JOIN namespaces n ON n.id = m.namespace_id
         WHERE m.user_id = ? AND n.kind = 'group' AND (m.expires_at IS NULL OR m.expires_at > ?)
         UNION
         SELECT n.parent_id FROM namespaces n JOIN up ON n.id = up.id WHERE n.parent_id IS NOT NULL
       )
       SELECT n.full_path FROM namespaces n JOIN up ON up.id = n.id
       WHERE n.kind = 'group' AND n.require_two_factor_authentication = 1 AND n.full_path != '' ORDER BY n.full_path LIMIT 1`,
      userId,
      today,
    )
    .toArray()[0]?.full_path ?? null;

/** Groups here of which the user is the only direct Owner (GitLab's `solo_owned_groups`). */
export const soleOwnedGroupsOf = (sql: SqlStorage, userId: number): number[] =>
  sql
    .exec<{ id: number }>(
      `SELECT m.namespace_id AS id FROM memberships m JOIN namespaces n ON n.id = m.namespace_id AND n.kind = 'group'
       WHERE m.user_id = ? AND m.access_level = ${OWNER} AND NOT EXISTS (
         SELECT 1 FROM memberships o WHERE o.namespace_id = m.namespace_id AND o.user_id != m.user_id AND o.access_level = ${OWNER}
           AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = o.user_id AND u.state = 'deleted'))`,
      userId,
    )
    .toArray()
    .map((r) => r.id);
