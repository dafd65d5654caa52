import type { NamespaceKind } from '../../../shared/access-levels';
import type { Env } from '../../env';
import type { NamespaceSnapshot } from '../namespace-registry';
import type { Result } from '../result';
import type { StoredRules } from './request-rules';

/**
 * What the Worker and other objects exchange with a group's or project's object (namespace.ts):
 * who calls, on which namespace, and the rows it answers with.
 */

/** Which group or project an object is, as the caller found it (passed on every call). */
export interface NamespaceRef {
  id: number;
  kind: NamespaceKind;
  creatorId: number | null;
  createdAt: string;
  /**
   * The registry row's settings and full path as the caller knows them, maybe from a cache. The
   * object keeps the newest version it is shown and judges by its own copy.
   */
  snapshot: NamespaceSnapshot;
  /**
   * The caller named it by `snapshot.full_path` from a cache: the object confirms that this is
   * still its path (same version), else answers `Stale` and the caller asks the Directory.
   */
  byPath: boolean;
  /** Its ancestors, nearest first, when the caller knows them (else the object asks the Directory once). */
  ancestorIds?: number[];
}

/** The caller's copy of the registry row is older than the object's, or the object is deleted. */
export interface Stale {
  ok: false;
  stale: true;
}

/** What a namespace's object answers: a Result, or that the caller must look it up again. */
export type NamespaceResult<T> = Result<T> | Stale;

/**
 * The caller. Their direct membership is read here, inside the object that owns it. Their level
 * inherited from ancestor groups is either known already, or the ancestor groups to ask, each
 * its own object (`directMembershipOf`), which the object does only when direct membership (or being
 * an administrator) does not settle the rule at hand.
 */
export interface Actor {
  userId: number;
  admin: boolean;
  inherited: number | { ancestorIds: number[] };
  /** The caller's names, for the events they cause (looked up later when absent). */
  username?: string;
  name?: string;
}

/** Who asks for access, as stored with the request (see schema.ts). */
export interface Requester {
  username: string;
  name: string;
}

/** A pending request, with the requester's names as they asked, what they asked and the approvals so far. */
export type AccessRequestRow = {
  user_id: number;
  requested_at: string;
  username: string;
  name: string;
  /** Why, the level and the end asked for; null when not given. */
  reason: string | null;
  access_level: number | null;
  expires_at: string | null;
  /** How many distinct managers must approve (the rules in force when it was made). */
  approvals_required: number;
  /** Requests and approvals through it end within this many hours (the rules then); null: no bound. */
  max_duration_hours: number | null;
  /** When it expires undecided; null: never. */
  pending_until: string | null;
  /** Who approved so far, oldest first (JSON of `Approval[]`, as read). */
  approvals: string;
};

/** One manager's approval of a request that needs more than one. */
export interface Approval {
  id: number;
  username: string | null;
  name: string | null;
  approved_at: string;
}

/** What a requester asks for (`POST …/access_requests`), checked against the rules in force. */
export interface AccessAsk {
  reason: string | null;
  accessLevel: number | null;
  expiresAt: string | null;
  breakGlass: boolean;
  /** The requester's email, for an auto-approve entry's `email_domain`. */
  email: string | null;
}

/** How a request ended when it was answered at once: approved by a rule. */
export type RuleApproval = 'auto_approve' | 'break_glass';

/** What requesting answers: the pending request, or the membership a rule granted at once. */
export type RequestOutcomeRow = { pending: AccessRequestRow } | { approved: ApprovedMemberRow; by: RuleApproval; request: AccessRequestRow };

/** What an approver chose: a level and an end, each defaulting to what was asked (undefined: not chosen). */
export interface ApprovalChoice {
  accessLevel?: number;
  expiresAt?: string | null;
}

/** What approving answers: more approvals are needed (the request), or the new member. */
export type ApprovalOutcome = { pending: AccessRequestRow } | { approved: ApprovedMemberRow };

export type MemberRow = {
  user_id: number;
  access_level: number;
  created_at: string;
  created_by: number | null;
  expires_at: string | null;
};

/** The new member, with the requester's name as their request carried it. */
type ApprovedMemberRow = MemberRow & Pick<AccessRequestRow, 'username' | 'name'>;

export interface PageOf<T> {
  total: number;
  items: T[];
}

/** A user's direct membership of a group, as the groups below it ask for it. */
export interface GroupMembership {
  level: number;
  /** The group's name. */
  group: string;
  /** The group's own access request rules, if it has any (they apply below it, see checks.ts). */
  rules?: StoredRules | null;
  /** The group's full path. */
  fullPath?: string;
}

/** The Durable Object of one group or project (namespace.ts), named by its id: how the Worker and other objects reach it. */
export const namespaceObject = (env: Env, id: number) => env.NAMESPACES.getByName(String(id));
