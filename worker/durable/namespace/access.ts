import { accessLevelName, OWNER } from '../../../shared/access-levels';
import { hasAccess, KINDS, mayGrantLevel, mayManageMemberAt, mayManageMembers, mayManageRequests, maySee, type Kind, type Standing } from '../../auth/policy';
import { isoNow } from '../../clock';
import { problems, type Problem } from '../../errors';
import { fail, ok, type Result } from '../result';
import { filterConditions, orderBy, type InboxFilter } from '../user/inbox';
import { actorRef, MEMBER_COLUMNS, membership, REQUEST_COLUMNS, requesterRef, unnamed } from './core';
import { NamespaceChecks } from './checks';
import type { AccessRequestRow, Actor, ApprovedMemberRow, GroupMembership, MemberRow, NamespaceResult, PageOf, Requester, NamespaceRef } from './types';

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
      const items = this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests ORDER BY seq LIMIT ? OFFSET ?`, limit, offset).toArray();
      return ok({ total: this.counts().requests, items });
    }
    // One group or project: no kind or path to match; ties by request order.
    const columns = { kind: "''", fullPath: "''", requestedAt: 'requested_at', username: 'username', name: 'name', namespaceId: 'seq', userId: 'user_id' };
    const { where, args } = filterConditions({ ...filter, kind: undefined, source: undefined }, columns);
    const body = `FROM access_requests WHERE ${['1 = 1', ...where].join(' AND ')}`;
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n ${body}`, ...args).one().n;
    const items = this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} ${body} ORDER BY ${orderBy(filter.sort, columns)} LIMIT ? OFFSET ?`, ...args, limit, offset).toArray();
    return ok({ total, items });
  }

  /** Turning requests off (`request_access_enabled`) refuses new ones; pending ones stay. */
  async requestAccess(ref: NamespaceRef, actor: Actor, requester: Requester): Promise<NamespaceResult<AccessRequestRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    // Being a direct member settles it (403); anyone else may still be a member through a group.
    const standing = await this.standing(actor, hasAccess);
    const result = this.mutate((): Result<AccessRequestRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      if (hasAccess(standing)) return fail(problems.forbidden());
      if (this.pendingRequest(actor.userId)) return fail(problems.badRequest({ user_id: ['already exists in source'] }));
      if (!here.value.requestAccessEnabled) return fail(problems.forbidden());
      const request = this.sql
        .exec<AccessRequestRow>(
          `INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?) RETURNING ${REQUEST_COLUMNS}`,
          actor.userId,
          isoNow(),
          requester.username,
          requester.name,
        )
        .one();
      const user = { id: actor.userId, username: requester.username, name: requester.name };
      this.record({ action: 'requested', author: user, user, since: request.requested_at });
      return ok(request);
    });
    await this.push();
    return result;
  }

  /** The request disappears and the member appears in one transaction, or neither happens. */
  async approveAccessRequest(
    ref: NamespaceRef,
    actor: Actor,
    userId: number,
    accessLevel: number,
    expiresAt: string | null = null,
  ): Promise<NamespaceResult<ApprovedMemberRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const [standing, inherited] = await Promise.all([
      this.standing(actor, (s) => mayManageRequests(kind, s) && mayGrantLevel(kind, s, accessLevel)),
      this.inheritedMembership(userId, accessLevel),
    ]);
    const result = this.mutate((): Result<ApprovedMemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const request = this.pendingRequest(userId);
      if (!request) return fail(problems.notFound());
      if (!mayManageRequests(kind, standing) || !mayGrantLevel(kind, standing, accessLevel)) return fail(problems.forbidden());
      const below = belowInherited(inherited, accessLevel);
      if (below) return fail(below);
      this.closeRequest(userId, { outcome: 'approved', by: actor.userId, level: accessLevel, expiresAt });
      const member = this.sql
        .exec<MemberRow>(
          `INSERT INTO members (user_id, access_level, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (user_id) DO UPDATE SET access_level = excluded.access_level, created_by = excluded.created_by, expires_at = excluded.expires_at
           RETURNING ${MEMBER_COLUMNS}`,
          userId,
          accessLevel,
          request.requested_at,
          actor.userId,
          expiresAt,
        )
        .one();
      this.record({
        action: 'approved',
        author: actorRef(actor),
        user: requesterRef(request),
        access_level: member.access_level,
        expires_at: member.expires_at,
        since: request.requested_at,
      });
      return ok({ ...member, username: request.username, name: request.name });
    });
    await this.push();
    return result;
  }

  /** Deny (by a manager) or withdraw (by the requester). */
  async removeAccessRequest(ref: NamespaceRef, actor: Actor, userId: number): Promise<NamespaceResult<null>> {
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
      this.closeRequest(userId, { outcome: withdrawing ? 'withdrawn' : 'denied', by: actor.userId });
      this.record({ action: withdrawing ? 'withdrawn' : 'denied', author: actorRef(actor), user: requesterRef(request), since: request.requested_at });
      return ok(null);
    });
    await this.push();
    return result;
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
