import { accessLevelName, DEFAULT_APPROVAL_LEVEL, OWNER } from '../../../shared/access-levels';
import {
  hasAccess,
  isGrantableLevel,
  KINDS,
  mayEditSettings,
  mayGrantLevel,
  mayManageMemberAt,
  mayManageMembers,
  mayManageRequests,
  maySee,
  type Kind,
  type Standing,
} from '../../auth/policy';
import { clock, isoNow } from '../../clock';
import { endHasPassed } from '../../dates';
import { problems, type Problem } from '../../errors';
import { fail, ok, type Result } from '../result';
import { filterConditions, orderBy, type InboxFilter } from '../user/inbox';
import { actorRef, MEMBER_COLUMNS, membership, REQUEST_COLUMNS, requesterRef, unnamed } from './core';
import { NamespaceChecks } from './checks';
import { autoApproval, groupsToAsk, judgeApprovalEnd, judgeAsk, judgeBreakGlass, publicRules, type JudgedAsk, type StoredRules } from './request-rules';
import {
  namespaceObject,
  type AccessAsk,
  type AccessRequestRow,
  type Actor,
  type ApprovalChoice,
  type Approval,
  type ApprovalOutcome,
  type GroupMembership,
  type MemberRow,
  type NamespaceRef,
  type NamespaceResult,
  type PageOf,
  type Requester,
  type RequestOutcomeRow,
  type RuleApproval,
} from './types';

/**
 * GitLab's `higher_access_level_than_group` validation of members (app/models/member.rb): a direct
 * membership below the one inherited from a group above is refused, with its words.
 */
const belowInherited = (inherited: GroupMembership | null, level: number): Problem | null =>
  inherited && inherited.level > level
    ? problems.badRequest({ access_level: [`should be greater than or equal to ${accessLevelName(inherited.level)} inherited membership from group ${inherited.group}`] })
    : null;

/** GitLab's answer when the last Owner of a group would go (`forbidden!` with a reason). */
const lastOwner = () => problems.forbidden('A group must have at least one owner');

/**
 * The access request and member rules of a group or project (GitLab's access requests and
 * members APIs). Each rule that reads and then writes runs in one synchronous transaction, so
 * concurrent calls cannot interleave: of two approvals of one request exactly one finds it.
 */
export abstract class NamespaceAccess extends NamespaceChecks {
  // Each operation checks, in GitLab's order: the caller may see it (else 404 Group/Project
  // Not Found), the request is pending (else 404 Not found), the caller may do this (else 403).
  /** Pending requests, oldest first: one index range per page, the total from a counter. */
  /**
   * Pending requests, oldest first, for those who may answer them. `filter`: the console's Access
   * requests tab (requester, age, sort), as the owners' inbox filters (worker/durable/user/inbox.ts).
   */
  async listAccessRequests(ref: NamespaceRef, actor: Actor, offset: number, limit: number, filter: InboxFilter = {}): Promise<NamespaceResult<PageOf<AccessRequestRow>>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const standing = await this.standing(actor, (s) => mayManageRequests(kind, s));
    if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
    if (!mayManageRequests(kind, standing)) return fail(problems.forbidden());
    if (Object.values(filter).every((v) => v === undefined)) {
      return ok(this.requestPage(limit, offset));
    }
    // One group or project: no kind or path to match; ties by request order.
    const columns = { kind: "''", fullPath: "''", requestedAt: 'r.requested_at', username: 'r.username', name: 'r.name', namespaceId: 'r.seq', userId: 'r.user_id' };
    const { where, args } = filterConditions({ ...filter, kind: undefined, source: undefined }, columns);
    const body = `FROM access_requests r WHERE ${['1 = 1', ...where].join(' AND ')}`;
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n ${body}`, ...args).one().n;
    const items = this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} ${body} ORDER BY ${orderBy(filter.sort, columns)} LIMIT ? OFFSET ?`, ...args, limit, offset).toArray();
    return ok({ total, items });
  }

  /**
   * Turning requests off (`request_access_enabled`) refuses new ones; pending ones stay. What is
   * asked is judged by the rules in force (request-rules.ts): a request that breaks them is
   * refused; one an auto-approve entry matches, or a break-glass request, is granted at once; any
   * other waits, with the rules' approvals and deadlines written on it. A direct member whose
   * membership ends may ask to extend it: a request carrying their current level.
   */
  async requestAccess(ref: NamespaceRef, actor: Actor, requester: Requester, ask: AccessAsk): Promise<NamespaceResult<RequestOutcomeRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    // Being a direct member settles it (403); anyone else may still be a member through a group.
    const { standing, rules } = await this.standingAndRules(actor, hasAccess);
    const askOf = groupsToAsk(rules, ask);
    const levels = ask.breakGlass ? [] : await Promise.all(askOf.map((id) => namespaceObject(this.env, id).directMembershipOf(actor.userId)));
    const memberOf = new Map(askOf.map((id, i) => [id, (levels[i]?.level ?? 0) > 0]));
    const result = this.mutate((): Result<RequestOutcomeRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const current = this.member(actor.userId);
      const extending = current !== null && current.expires_at !== null && !ask.breakGlass;
      if (hasAccess(standing) && !extending) return fail(problems.forbidden());
      if (this.pendingRequest(actor.userId)) return fail(problems.badRequest({ user_id: ['already exists in source'] }));
      if (!here.value.requestAccessEnabled) return fail(problems.forbidden());
      if (extending && ask.accessLevel !== null && ask.accessLevel !== current.access_level) {
        return fail(problems.badRequest({ access_level: ['must be the current level to extend a membership'] }));
      }
      const asked: AccessAsk = extending ? { ...ask, accessLevel: current.access_level } : ask;
      const now = clock.now();
      if (ask.breakGlass) {
        const granted = judgeBreakGlass(rules, asked, now);
        if (!granted.ok) return granted;
        if (!isGrantableLevel(kind, granted.value.accessLevel)) return fail(problems.forbidden());
        return ok(this.grantByRule(actor.userId, requester, asked, granted.value, 'break_glass'));
      }
      const judged = judgeAsk(rules, asked, now);
      if (!judged.ok) return judged;
      const auto = autoApproval(rules, kind.name, asked, judged.value, memberOf, now);
      if (auto && isGrantableLevel(kind, auto.accessLevel)) return ok(this.grantByRule(actor.userId, requester, asked, auto, 'auto_approve'));
      const request = this.insertRequest(actor.userId, requester, { ...asked, expiresAt: judged.value.expiresAt }, judged.value);
      this.record({
        action: 'requested',
        author: requesterRef(request),
        user: requesterRef(request),
        since: request.requested_at,
        reason: request.reason,
        access_level: request.access_level,
        expires_at: request.expires_at,
        approvals_required: request.approvals_required > 1 ? request.approvals_required : null,
      });
      return ok({ pending: request });
    });
    await this.push();
    return result;
  }

  /** Stores a request as asked and judged (the triggers queue it for the index). */
  private insertRequest(userId: number, requester: Requester, ask: AccessAsk, judged: JudgedAsk | null): AccessRequestRow {
    this.sql.exec(
      `INSERT INTO access_requests (user_id, requested_at, username, name, reason, access_level, expires_at, approvals_required, max_duration_hours, pending_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      userId,
      isoNow(),
      requester.username,
      requester.name,
      ask.reason,
      ask.accessLevel,
      ask.expiresAt,
      judged?.approvalsRequired ?? 1,
      judged?.maxDurationHours ?? null,
      judged?.pendingUntil ?? null,
    );
    return this.pendingRequest(userId) as AccessRequestRow;
  }

  /**
   * A request a rule grants at once, in the running transaction: the request is stored and closed
   * as approved (so the requester's own list shows it), the membership begins or is extended, and
   * the event says which rule (no author for auto-approve; the requester for break-glass).
   */
  private grantByRule(userId: number, requester: Requester, ask: AccessAsk, grant: { accessLevel: number; expiresAt: string | null }, by: RuleApproval): RequestOutcomeRow {
    const request = this.insertRequest(userId, requester, { ...ask, expiresAt: grant.expiresAt }, null);
    this.closeRequest(userId, { outcome: 'approved', by: null, level: grant.accessLevel, expiresAt: grant.expiresAt, rule: by });
    const member = this.upsertMember(userId, grant.accessLevel, request.requested_at, null, grant.expiresAt);
    this.record({
      action: by === 'auto_approve' ? 'auto_approved' : 'break_glass',
      author: by === 'auto_approve' ? null : requesterRef(request),
      user: requesterRef(request),
      access_level: member.access_level,
      expires_at: member.expires_at,
      since: request.requested_at,
      reason: request.reason,
    });
    return { approved: { ...member, username: request.username, name: request.name }, by, request };
  }

  /** A membership begins, or an existing one takes the new level and end (an extension). */
  private upsertMember(userId: number, level: number, createdAt: string, by: number | null, expiresAt: string | null): MemberRow {
    return this.sql
      .exec<MemberRow>(
        `INSERT INTO members (user_id, access_level, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET access_level = excluded.access_level, created_by = excluded.created_by, expires_at = excluded.expires_at
         RETURNING ${MEMBER_COLUMNS}`,
        userId,
        level,
        createdAt,
        by,
        expiresAt,
      )
      .one();
  }

  /**
   * An approval. The level and end default to what was asked (GitLab's Developer when nothing
   * was); the approver may change both within what they may grant and the request's rules. A
   * request that needs several approvals counts distinct managers (never the requester): an
   * approval that is not the last is recorded on it, and the last one makes the member. The
   * request disappears and the member appears in one transaction, or neither happens.
   */
  async approveAccessRequest(ref: NamespaceRef, actor: Actor, userId: number, choice: ApprovalChoice): Promise<NamespaceResult<ApprovalOutcome>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const levelAsked = () => choice.accessLevel ?? this.pendingRequest(userId)?.access_level ?? DEFAULT_APPROVAL_LEVEL;
    let accessLevel = levelAsked();
    let [standing, inherited] = await this.approverAndHeir(kind, actor, userId, accessLevel);
    // The request may have been withdrawn and asked again at another level while this waited:
    // the checks are made again for the level it asks now, and the decision follows them at once.
    while (this.pendingRequest(userId) !== null && levelAsked() !== accessLevel) {
      accessLevel = levelAsked();
      [standing, inherited] = await this.approverAndHeir(kind, actor, userId, accessLevel);
    }
    const result = this.mutate((): Result<ApprovalOutcome> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const request = this.pendingRequest(userId);
      // A request whose deadline passed while this call waited has lapsed, whether or not the alarm has run.
      if (!request || (request.pending_until !== null && request.pending_until <= isoNow())) return fail(problems.notFound());
      if (!mayManageRequests(kind, standing) || !mayGrantLevel(kind, standing, accessLevel) || actor.userId === userId) return fail(problems.forbidden());
      const below = belowInherited(inherited, accessLevel);
      if (below) return fail(below);
      const expiresAt = choice.expiresAt !== undefined ? choice.expiresAt : request.expires_at;
      const now = clock.now();
      if (expiresAt !== null && endHasPassed(expiresAt, now)) return fail(problems.pastDate());
      const bound = judgeApprovalEnd(request.max_duration_hours, expiresAt, now);
      if (bound) return fail(bound);
      const approvals = JSON.parse(request.approvals) as Approval[];
      if (approvals.some((a) => a.id === actor.userId)) return fail(problems.conflict('You have already approved this access request'));
      const approval: Approval = { id: actor.userId, username: actor.username ?? null, name: actor.name ?? null, approved_at: isoNow() };
      const counted = request.approvals_required > 1 ? { approvals: [...approvals, approval], approvals_required: request.approvals_required } : {};
      if (approvals.length + 1 < request.approvals_required) {
        this.sql.exec(
          'INSERT INTO approvals (user_id, approver_id, username, name, approved_at) VALUES (?, ?, ?, ?, ?)',
          userId,
          approval.id,
          approval.username,
          approval.name,
          approval.approved_at,
        );
        this.record({ action: 'approval', author: actorRef(actor), user: requesterRef(request), since: request.requested_at, reason: request.reason, ...counted });
        return ok({ pending: this.pendingRequest(userId) as AccessRequestRow });
      }
      this.closeRequest(userId, { outcome: 'approved', by: actor.userId, level: accessLevel, expiresAt });
      const member = this.upsertMember(userId, accessLevel, request.requested_at, actor.userId, expiresAt);
      this.record({
        action: 'approved',
        author: actorRef(actor),
        user: requesterRef(request),
        access_level: member.access_level,
        expires_at: member.expires_at,
        since: request.requested_at,
        reason: request.reason,
        ...counted,
      });
      return ok({ approved: { ...member, username: request.username, name: request.name } });
    });
    await this.push();
    return result;
  }

  /** What an approval at `level` is judged by: where the approver stands, and the requester's membership inherited from above. */
  private approverAndHeir(kind: Kind, actor: Actor, userId: number, level: number): Promise<[Standing, GroupMembership | null]> {
    return Promise.all([this.standing(actor, (s) => mayManageRequests(kind, s) && mayGrantLevel(kind, s, level)), this.inheritedMembership(userId, level)]);
  }

  /** Deny (by a manager, with an optional reason the requester sees) or withdraw (by the requester). */
  async removeAccessRequest(ref: NamespaceRef, actor: Actor, userId: number, reason: string | null): Promise<NamespaceResult<null>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const withdrawing = userId === actor.userId;
    const permitted = (s: Standing) => (withdrawing ? maySee(here.value.visibility, s) : mayManageRequests(kind, s));
    const standing = await this.standing(actor, permitted);
    const result = this.mutate((): Result<null> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const request = this.pendingRequest(userId);
      if (!request) return fail(problems.notFound());
      if (!permitted(standing)) return fail(problems.forbidden());
      this.closeRequest(userId, withdrawing ? { outcome: 'withdrawn', by: actor.userId } : { outcome: 'denied', by: actor.userId, reason });
      this.record({
        action: withdrawing ? 'withdrawn' : 'denied',
        author: actorRef(actor),
        user: requesterRef(request),
        since: request.requested_at,
        reason: withdrawing ? request.reason : reason,
      });
      return ok(null);
    });
    await this.push();
    return result;
  }

  /** The access request rules in force here (its own, or inherited); anyone who may see it may read them. */
  async accessRequestRules(ref: NamespaceRef, actor: Actor): Promise<NamespaceResult<{ rules: StoredRules; inheritedFrom: string | null }>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const { standing, rules, inheritedFrom } = await this.standingAndRules(actor, (s) => maySee(here.value.visibility, s));
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    return ok({ rules, inheritedFrom });
  }

  /**
   * Sets this group's or project's own rules (null: inherit again), by who may edit its settings,
   * with a `settings_changed` event in the same transaction. Pending requests keep the rules they
   * were made under.
   */
  async setAccessRequestRules(ref: NamespaceRef, actor: Actor, rules: StoredRules | null): Promise<NamespaceResult<{ rules: StoredRules; inheritedFrom: string | null }>> {
    const kind = KINDS[ref.kind];
    const allowed = await this.permitted(ref, actor, (s) => mayEditSettings(kind, s, false));
    if (!allowed.ok) return allowed;
    const before = this.ownRules();
    const to = rules === null ? null : JSON.stringify(rules);
    const result = this.mutate(() => {
      this.sql.exec('UPDATE meta SET rules = ?', to);
      this.record({
        action: 'settings_changed',
        author: actorRef(actor),
        change: { attribute: 'access_request_rules', from: before === null ? null : JSON.stringify(publicRules(before)), to: rules === null ? null : JSON.stringify(publicRules(rules)) },
      });
      return ok(null);
    });
    if (!result.ok) return result;
    return this.accessRequestRules(ref, actor);
  }

  /** Direct members, oldest first; 404 when the caller may not see the group or project. */
  async listMembers(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<NamespaceResult<PageOf<MemberRow>>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const standing = await this.standing(actor, (s) => maySee(here.value.visibility, s));
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    const items = this.sql.exec<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members ORDER BY seq LIMIT ? OFFSET ?`, limit, offset).toArray();
    return ok({ total: this.counts().members, items });
  }

  /** One direct member (`GET /:kind/:id/members/:user_id`), or 404 Member Not Found. */
  async getMember(ref: NamespaceRef, actor: Actor, userId: number): Promise<NamespaceResult<MemberRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const standing = await this.standing(actor, (s) => maySee(here.value.visibility, s));
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    const member = this.member(userId);
    return member ? ok(member) : fail(problems.notFound('Member'));
  }

  /**
   * Adds a member (`POST /:kind/:id/members`); their pending request, if any, goes in the same
   * transaction. `user` is null when the Directory has no such user.
   */
  async addMember(
    ref: NamespaceRef,
    actor: Actor,
    userId: number,
    user: Requester | null,
    accessLevel: number,
    expiresAt: string | null,
  ): Promise<NamespaceResult<MemberRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const permitted = (s: Standing) => mayManageMembers(kind, s) && mayGrantLevel(kind, s, accessLevel);
    const [standing, inherited] = await Promise.all([this.standing(actor, permitted), this.inheritedMembership(userId, accessLevel)]);
    const result = this.mutate((): Result<MemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      if (!mayManageMembers(kind, standing)) return fail(problems.forbidden());
      if (!user) return fail(problems.notFound('User'));
      if (this.member(userId)) return fail(problems.conflict('Member already exists'));
      if (!mayGrantLevel(kind, standing, accessLevel)) return fail(problems.forbidden());
      const below = belowInherited(inherited, accessLevel);
      if (below) return fail(below);
      // Being added answers a pending request as an approval would.
      this.closeRequest(userId, { outcome: 'approved', by: actor.userId, level: accessLevel, expiresAt });
      const member = this.sql
        .exec<MemberRow>(
          `INSERT INTO members (user_id, access_level, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${MEMBER_COLUMNS}`,
          userId,
          accessLevel,
          isoNow(),
          actor.userId,
          expiresAt,
        )
        .one();
      this.record({ action: 'added', author: actorRef(actor), user: { id: userId, ...user }, ...membership(member) });
      return ok(member);
    });
    await this.push();
    return result;
  }

  /** Changes a member's level, and their expiry when given (`PUT /:kind/:id/members/:user_id`). */
  async updateMember(
    ref: NamespaceRef,
    actor: Actor,
    userId: number,
    change: { accessLevel: number; expiresAt?: string | null },
  ): Promise<NamespaceResult<MemberRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const current = this.member(userId);
    const level = change.accessLevel;
    const permitted = (s: Standing) => mayManageMemberAt(kind, s, current?.access_level ?? 0) && mayGrantLevel(kind, s, level);
    const [standing, inherited] = await Promise.all([this.standing(actor, permitted), this.inheritedMembership(userId, level)]);
    const result = this.mutate((): Result<MemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      if (!mayManageMembers(kind, standing)) return fail(problems.forbidden());
      const member = this.member(userId);
      if (!member) return fail(problems.notFound('Member'));
      if (!mayManageMemberAt(kind, standing, member.access_level)) return fail(problems.forbidden());
      if (!mayGrantLevel(kind, standing, level)) return fail(problems.forbidden());
      const below = belowInherited(inherited, level);
      if (below) return fail(below);
      if (this.wouldLoseLastOwner(kind, member, level)) return fail(lastOwner());
      const expiresAt = change.expiresAt === undefined ? member.expires_at : change.expiresAt;
      const updated = this.sql
        .exec<MemberRow>(`UPDATE members SET access_level = ?, expires_at = ? WHERE user_id = ? RETURNING ${MEMBER_COLUMNS}`, level, expiresAt, userId)
        .one();
      this.record({
        action: 'updated',
        author: actorRef(actor),
        user: unnamed(userId),
        ...membership(updated),
        previous: { access_level: member.access_level, expires_at: member.expires_at },
      });
      return ok(updated);
    });
    await this.push();
    return result;
  }

  /** Removes a member (`DELETE /:kind/:id/members/:user_id`); anyone may leave, but a group's last Owner. */
  async removeMember(ref: NamespaceRef, actor: Actor, userId: number): Promise<NamespaceResult<null>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const leaving = userId === actor.userId;
    const current = this.member(userId);
    const permitted = (s: Standing) => (leaving ? maySee(here.value.visibility, s) : mayManageMemberAt(kind, s, current?.access_level ?? 0));
    const standing = await this.standing(actor, permitted);
    const result = this.mutate((): Result<null> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const member = this.member(userId);
      if (!member) return fail(problems.notFound('Member'));
      if (!leaving && !mayManageMemberAt(kind, standing, member.access_level)) return fail(problems.forbidden());
      if (this.wouldLoseLastOwner(kind, member, 0)) return fail(lastOwner());
      this.sql.exec('DELETE FROM members WHERE user_id = ?', userId);
      this.record({ action: 'removed', author: actorRef(actor), user: unnamed(userId), ...membership(member) });
      return ok(null);
    });
    await this.push();
    return result;
  }

  /** Where the caller stands on this group or project; 404 when they may not see it. */
  async standingOf(ref: NamespaceRef, actor: Actor): Promise<NamespaceResult<Standing>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const standing = await this.standing(actor, () => false);
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    return ok(standing);
  }

  /** Whether this change leaves a group that keeps an Owner (GitLab's groups) with none. */
  private wouldLoseLastOwner(kind: Kind, member: MemberRow, newLevel: number): boolean {
    if (!kind.keepsAnOwner || member.access_level !== OWNER || newLevel === OWNER) return false;
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM members WHERE access_level = ?', OWNER).one().n <= 1;
  }
}
