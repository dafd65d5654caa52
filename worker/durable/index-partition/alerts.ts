import { OWNER, type NamespaceKind } from '../../../shared/access-levels';
import { KINDS } from '../../auth/policy';
import { warnAtSql } from '../../dates';

/** How long a break-glass grant stays among its Owners' alerts. */
const BREAK_GLASS_ALERT_HOURS = 24;

/**
 * An alert for a manager (`GET /user/access_alerts`): a break-glass grant in a group or project
 * they own (directly or through an ancestor group), or someone else's membership there that
 * ends soon (as the namespace object's `expiring` event: a day before a date, an hour before a
 * date-time), where they manage requests (Owner of a group, Maintainer+ of a project).
 */
export type AccessAlertRow = {
  action: 'break_glass' | 'expiring';
  namespace_id: number;
  kind: NamespaceKind;
  source_name: string;
  source_full_path: string;
  user_id: number;
  username: string | null;
  name: string | null;
  access_level: number;
  expires_at: string | null;
  /** When it happened (the grant), or when the warning began. */
  at: string;
  reason: string | null;
};

/**
 * The caller's highest level on every group and project of this partition, through their own
 * memberships (still running at `now`) and the groups above: one walk down from their memberships.
 */
const LEVELS = `WITH RECURSIVE reach(id, level) AS (
    SELECT namespace_id, access_level FROM memberships WHERE user_id = ?1 AND (expires_at IS NULL OR expires_at > ?2)
    UNION
    SELECT n.id, r.level FROM reach r JOIN namespaces n ON n.parent_id = r.id
  ), levels AS (SELECT id, MAX(level) AS level FROM reach GROUP BY id)`;

const SOURCE = `n.id AS namespace_id, n.kind, n.name AS source_name, n.full_path AS source_full_path, u.username, u.name`;

/** A manager's alerts here at `now` (ISO 8601), newest first. */
export const alertsOf = (sql: SqlStorage, userId: number, now: string): AccessAlertRow[] => {
  const since = new Date(Date.parse(now) - BREAK_GLASS_ALERT_HOURS * 3_600_000).toISOString();
  return sql
    .exec<AccessAlertRow>(
      `${LEVELS}
       SELECT 'break_glass' AS action, ${SOURCE}, p.user_id, p.access_level, p.expires_at, p.decided_at AS at, json_extract(p.details, '$.reason') AS reason
       FROM pending_requests p JOIN levels l ON l.id = p.namespace_id JOIN namespaces n ON n.id = p.namespace_id LEFT JOIN users u ON u.id = p.user_id
       WHERE l.level >= ${OWNER} AND p.user_id != ?1 AND p.pending = 0 AND p.outcome = 'approved'
         AND json_extract(p.details, '$.approved_by_rule') = 'break_glass' AND p.decided_at >= ?3
       UNION ALL
       SELECT 'expiring' AS action, ${SOURCE}, m.user_id, m.access_level, m.expires_at, ${warnAtSql('m.expires_at')} AS at, NULL AS reason
       FROM memberships m JOIN levels l ON l.id = m.namespace_id JOIN namespaces n ON n.id = m.namespace_id LEFT JOIN users u ON u.id = m.user_id
       WHERE m.user_id != ?1 AND m.expires_at IS NOT NULL AND m.expires_at > ?2 AND ${warnAtSql('m.expires_at')} <= ?2
         AND l.level >= CASE n.kind WHEN 'group' THEN ${KINDS.group.managesRequests} ELSE ${KINDS.project.managesRequests} END
       ORDER BY at DESC, namespace_id, user_id`,
      userId,
      now,
      since,
    )
    .toArray();
};
