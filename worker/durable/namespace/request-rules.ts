import { DEFAULT_APPROVAL_LEVEL, MINIMAL_ACCESS, type NamespaceKind } from '../../../shared/access-levels';
import type { AccessRequestRules } from '../../../shared/api-types';
import { endAfterHours, endHasPassed, endMs } from '../../dates';
import { problems, type Problem } from '../../errors';
import { fail, ok, type Result } from '../result';
import type { AccessAsk } from './types';

/**
 * The access request rules of a group or project (`GET`/`PUT …/access_request_rules`) and what
 * they decide about one request, as pure functions the object runs inside its transaction. A
 * project's own rules override its group's; otherwise the nearest ancestor group with rules
 * decides (the object reads them in the calls it makes to its ancestors anyway).
 */

/** An auto-approve entry as stored: the group named by `member_of` resolved to its id when the rules were saved. */
type StoredAutoApprove = AccessRequestRules['auto_approve'][number] & { member_of_id?: number };
export type StoredRules = Omit<AccessRequestRules, 'auto_approve'> & { auto_approve: StoredAutoApprove[] };

/** No rules: every request waits for one manager, as GitLab's do. */
export const NO_RULES: StoredRules = {
  reason_required: false,
  max_duration_hours: null,
  pending_expires_after_days: null,
  approvals_required: 1,
  auto_approve: [],
  break_glass: null,
};

/** The rules as clients read them (without the resolved ids). */
export const publicRules = (r: StoredRules): AccessRequestRules => ({
  ...r,
  auto_approve: r.auto_approve.map(({ member_of_id: _id, ...entry }) => entry),
});

const HOUR_MS = 3_600_000;
const within = (end: string, now: number, hours: number): boolean => endMs(end) <= now + hours * HOUR_MS;
const withinMessage = (hours: number): Problem => problems.badRequest({ expires_at: [`must be within ${hours} hours`] });

/** What a request becomes under the rules: its end (a bound fills one in), and what it waits for. */
export interface JudgedAsk {
  expiresAt: string | null;
  approvalsRequired: number;
  maxDurationHours: number | null;
  pendingUntil: string | null;
}

/**
 * A plain request (not break-glass) against the rules: a reason when they require one; an end in
 * the future, and within `max_duration_hours` when they bound it (a request without an end gets
 * the longest they allow).
 */
export const judgeAsk = (rules: StoredRules, ask: AccessAsk, now: number): Result<JudgedAsk> => {
  if (rules.reason_required && !ask.reason) return fail(problems.badRequest({ reason: ["can't be blank"] }));
  if (ask.expiresAt !== null && endHasPassed(ask.expiresAt, now)) return fail(problems.pastDate());
  const max = rules.max_duration_hours;
  const expiresAt = ask.expiresAt ?? (max === null ? null : endAfterHours(now, max));
  if (max !== null && expiresAt !== null && !within(expiresAt, now, max)) return fail(withinMessage(max));
  return ok({
    expiresAt,
    approvalsRequired: rules.approvals_required,
    maxDurationHours: max,
    pendingUntil: rules.pending_expires_after_days === null ? null : new Date(now + rules.pending_expires_after_days * 24 * HOUR_MS).toISOString(),
  });
};

/** A break-glass request: the rule must exist (else 403), a reason, an end within the rule's hours (the longest by default). */
export const judgeBreakGlass = (rules: StoredRules, ask: AccessAsk, now: number): Result<{ accessLevel: number; expiresAt: string }> => {
  const rule = rules.break_glass;
  if (!rule) return fail(problems.forbidden('No break-glass rule applies here'));
  if (!ask.reason) return fail(problems.badRequest({ reason: ["can't be blank"] }));
  if (ask.expiresAt !== null && endHasPassed(ask.expiresAt, now)) return fail(problems.pastDate());
  const expiresAt = ask.expiresAt ?? endAfterHours(now, rule.max_duration_hours);
  if (!within(expiresAt, now, rule.max_duration_hours)) return fail(withinMessage(rule.max_duration_hours));
  return ok({ accessLevel: rule.access_level, expiresAt });
};

/** The email's domain, lower case; null without one. */
const domainOf = (email: string | null): string | null => {
  const at = email?.lastIndexOf('@') ?? -1;
  return email && at >= 0 ? email.slice(at + 1).toLowerCase() : null;
};

/**
 * The first auto-approve entry whose every given field holds, and what it grants: the level and
 * end asked, or where not asked the entry's bounds (its highest level, up to GitLab's default,
 * and its longest duration). `memberOf` says whether the requester is a member of each entry's
 * named group. Null when none matches.
 */
export const autoApproval = (
  rules: StoredRules,
  kind: NamespaceKind,
  ask: AccessAsk,
  judged: JudgedAsk,
  memberOf: ReadonlyMap<number, boolean>,
  now: number,
): { accessLevel: number; expiresAt: string | null } | null => {
  for (const entry of rules.auto_approve) {
    const level = ask.accessLevel ?? Math.min(DEFAULT_APPROVAL_LEVEL, entry.max_access_level ?? DEFAULT_APPROVAL_LEVEL);
    if (level === MINIMAL_ACCESS && kind === 'project') continue;
    const expiresAt =
      ask.expiresAt ?? (entry.max_duration_hours === undefined ? judged.expiresAt : earlier(judged.expiresAt, endAfterHours(now, entry.max_duration_hours)));
    if (entry.email_domain !== undefined && domainOf(ask.email) !== entry.email_domain.toLowerCase()) continue;
    if (entry.member_of_id !== undefined && !memberOf.get(entry.member_of_id)) continue;
    if (entry.max_access_level !== undefined && level > entry.max_access_level) continue;
    if (entry.max_duration_hours !== undefined && (expiresAt === null || !within(expiresAt, now, entry.max_duration_hours))) continue;
    return { accessLevel: level, expiresAt };
  }
  return null;
};

const earlier = (a: string | null, b: string): string => (a === null || endMs(b) < endMs(a) ? b : a);

/** The groups the auto-approve entries name, whose membership of the requester must be asked (only when the cheaper fields hold). */
export const groupsToAsk = (rules: StoredRules, ask: AccessAsk): number[] => [
  ...new Set(
    rules.auto_approve
      .filter((e) => e.member_of_id !== undefined && (e.email_domain === undefined || domainOf(ask.email) === e.email_domain.toLowerCase()))
      .map((e) => e.member_of_id as number),
  ),
];

/** An approval's end against the request's bound (`max_duration_hours` of the rules it was made under). */
export const judgeApprovalEnd = (maxHours: number | null, expiresAt: string | null, now: number): Problem | null => {
  if (maxHours === null) return null;
  if (expiresAt === null) return problems.badRequest({ expires_at: [`must be within ${maxHours} hours`] });
  return within(expiresAt, now, maxHours) ? null : withinMessage(maxHours);
};
