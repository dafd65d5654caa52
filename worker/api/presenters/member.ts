import type { AccessRequest, ApprovedAccessRequest, Member, RuleApprovedAccessRequest } from '../../../shared/api-types';
import type { UserRow } from '../../durable/directory/types';
import type { AccessRequestRow, Approval, MemberRow, RuleApproval } from '../../durable/namespace/types';
import { presentUserBasic } from './user';

export { AccessRequestSchema, ApprovedAccessRequestSchema, MemberSchema, RuleApprovedAccessRequestSchema } from '../../../shared/schemas';

type UserFields = Pick<UserRow, 'id' | 'username' | 'name' | 'state'>;
/** Who added or approved someone: named, without a state. */
type ActorFields = Pick<UserRow, 'id' | 'username' | 'name'>;
type MemberFields = Pick<MemberRow, 'access_level' | 'created_at' | 'expires_at'>;

const createdByOf = (u: ActorFields): NonNullable<Member['created_by']> => ({ id: u.id, username: u.username, name: u.name });

/** What a request asked and the approvals it has, as its row holds them. */
type AskFields = Pick<AccessRequestRow, 'requested_at' | 'reason' | 'access_level' | 'expires_at' | 'approvals_required' | 'approvals'>;

/**
 * What a request asked, from the JSON a copy of it carries (the index partitions' and the inbox's
 * `details`, written by the namespace object's triggers); nothing asked when there is none.
 */
export const askOfDetails = (requestedAt: string, details: string | null): AskFields => {
  const d = (details ? JSON.parse(details) : {}) as Partial<{ reason: string | null; access_level: number | null; expires_at: string | null; approvals_required: number; approvals: Approval[] }>;
  return {
    requested_at: requestedAt,
    reason: d.reason ?? null,
    access_level: d.access_level ?? null,
    expires_at: d.expires_at ?? null,
    approvals_required: d.approvals_required ?? 1,
    approvals: JSON.stringify(d.approvals ?? []),
  };
};

/**
 * A pending request (GitLab's `AccessRequester`): the requester, when they asked, and Knock's
 * additions: what they asked (null when not given) and the approvals so far.
 */
export const presentAccessRequest = (r: AskFields, u: UserFields, origin: string): AccessRequest => ({
  ...presentUserBasic(u, origin),
  created_at: r.requested_at,
  requested_at: r.requested_at,
  reason: r.reason,
  access_level: r.access_level,
  expires_at: r.expires_at,
  approvals_required: r.approvals_required,
  approvals: JSON.parse(r.approvals) as Approval[],
});

/** A request a rule granted at once: the new member, with when and why they asked and which rule. */
export const presentRuleApproved = (m: MemberFields, u: UserFields, r: AskFields, by: RuleApproval, origin: string): RuleApprovedAccessRequest => ({
  ...presentMember(m, u, null, origin),
  requested_at: r.requested_at,
  reason: r.reason,
  approved_by_rule: by,
});

/** A member, in GitLab's shape; `created_by` is who added them, when someone did. */
export const presentMember = (m: MemberFields, u: UserFields, createdBy: ActorFields | null, origin: string): Member => ({
  ...presentUserBasic(u, origin),
  access_level: m.access_level,
  created_at: m.created_at,
  expires_at: m.expires_at,
  ...(createdBy ? { created_by: createdByOf(createdBy) } : {}),
});

/** What approving answers: the new member and who approved them. */
export const presentApprovedMember = (m: MemberFields, u: UserFields, approver: ActorFields, origin: string): ApprovedAccessRequest => ({
  ...presentMember(m, u, null, origin),
  created_by: createdByOf(approver),
});
