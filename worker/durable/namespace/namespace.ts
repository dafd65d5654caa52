import { DurableObject } from 'cloudflare:workers';
import { accessLevelName, DEVELOPER, OWNER, type NamespaceKind } from '../../../shared/access-levels';
import {
  auditEventReach,
  directStanding,
  hasAccess,
  KINDS,
  mayGrantLevel,
  mayManageMemberAt,
  mayManageEvents,
  mayManageMembers,
  mayManageRequests,
  maySee,
  type Kind,
  type Standing,
} from '../../auth/policy';
import { clock, isoNow, todayUtc } from '../../clock';
import { startOfDay } from '../../dates';
import type { Visibility } from '../../../shared/api-types';
import type { Env } from '../../env';
import { problems, type Problem } from '../../errors';
import { eventId, newEvent, redactedUrl, type EventDraft, type EventEntity, type EventRecord, type HookTrigger, type NewEvent, type UserRef } from '../../events/event';
import { hookPayload } from '../../events/payload';
import { auditLog } from '../audit-log/audit-log';
import { directory, type IndexReply } from '../directory/directory';
import { allIndexPartitions, treeIndex, type RequesterCopy, type SourceCopy } from '../index-partition/index-partition';
import { EventLog, type AuditFilter, type LoggedEvent, type UserLookup } from '../event-log';
import { migrate } from '../migrations';
import type { MembershipChange, NamespaceSnapshot, RequestChange, RequestOutcome } from '../namespace-registry';
import { NAMESPACE_SCHEMA } from './schema';
import { fail, ok, type Result } from '../result';
import { MAX_HOOKS, Webhooks, type HookLogRow, type HookRow, type HookSettings, type StatusFilter } from './webhooks';

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
const STALE: Stale = { ok: false, stale: true };

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

/** Who asks for access, as stored with the request (see namespace-schema.ts). */
export interface Requester {
  username: string;
  name: string;
}

/** A pending request, with the requester's names as they asked. */
export type AccessRequestRow = {
  user_id: number;
  requested_at: string;
  username: string;
  name: string;
};

export type MemberRow = {
  user_id: number;
  access_level: number;
  created_at: string;
  created_by: number | null;
  expires_at: string | null;
};

/** The new member, with the requester's name as their request carried it. */
export type ApprovedMemberRow = MemberRow & Pick<AccessRequestRow, 'username' | 'name'>;

export interface PageOf<T> {
  total: number;
  items: T[];
}

const REQUEST_COLUMNS = 'user_id, requested_at, username, name';
const MEMBER_COLUMNS = 'user_id, access_level, created_at, created_by, expires_at';

/** How long before an unpushed membership change, or an event not yet copied up, is retried. */
const PUSH_RETRY_MS = 10_000;
const PUSH_BATCH = 100;
/** Events copied to the ancestor groups and the instance log per call. */
const FORWARD_BATCH = 100;
/**
 * Background work (copying events up, webhook deliveries) waits this long after it becomes due,
 * so that a burst of changes is handled in one run of the alarm rather than one run each.
 */
const BACKGROUND_BATCH_MS = 250;
/** The furthest ahead the alarm is set for an expiry (see `scheduleAlarm`). */
const EXPIRY_HORIZON_MS = 365 * 24 * 3600 * 1000;

/** The object's own copy of its registry row (see `NamespaceRef.snapshot`). */
interface Settings {
  visibility: Visibility;
  requestAccessEnabled: boolean;
  fullPath: string;
  name: string;
  version: number;
  deleted: boolean;
}

type OutboxRow = {
  version: number;
  entry: 'member' | 'request';
  user_id: number;
  access_level: number;
  created_at: string;
  created_by: number | null;
  expires_at: string | null;
  outcome: RequestOutcome | null;
  granted_level: number | null;
  decided_at: string | null;
};

/** How a pending request ends, written on its row just before it is deleted (see schema.ts). */
type Closing =
  | { outcome: 'approved'; by: number; level: number; expiresAt: string | null }
  | { outcome: 'denied' | 'withdrawn'; by: number }
  | { outcome: 'removed' };

/** The caller as an event's author. */
const actorRef = (actor: Actor): UserRef => ({ id: actor.userId, username: actor.username ?? null, name: actor.name ?? null });
/** The requester, with the names their request carries. */
const requesterRef = (r: AccessRequestRow): UserRef => ({ id: r.user_id, username: r.username, name: r.name });
/** A user whose names the object does not have; they are looked up when the event is read or sent. */
const unnamed = (id: number): UserRef => ({ id, username: null, name: null });
/** A membership's fields of an event. */
const membership = (m: MemberRow) => ({ access_level: m.access_level, expires_at: m.expires_at, since: m.created_at });

/** Who may read a group's or project's audit events and manage its webhooks. */
const managesEvents = (kind: Kind) => (s: Standing) => mayManageEvents(kind, s);

/** A user's direct membership of a group, as the groups below it ask for it. */
export interface GroupMembership {
  level: number;
  /** The group's name. */
  group: string;
}

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
 * One group or project: its members and access requests, in SQLite. Every rule that reads and
 * then writes runs in one synchronous transaction, so concurrent calls cannot interleave: of two
 * approvals of one request exactly one finds it.
 */
export class Namespace extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private namespaceId: number | null = null;
  private kind: NamespaceKind = 'group';
  private settings: Settings | null = null;
  /** The earliest `expires_at` of any member; undefined until read. */
  private nextExpiry: string | null | undefined = undefined;
  /** Its audit events, with those of everything below it (see event-log.ts). */
  private readonly log: EventLog;
  private readonly hooks: Webhooks;
  /** Copying events up failed: not again before this time (epoch ms). */
  private forwardRetryAt = 0;
  /** When the oldest event still to be copied up happened; null when none is, undefined until read. */
  private forwardSince: string | null | undefined = undefined;
  /** Its ancestors, nearest first (the tree's root last); null until known. */
  private treeIds: number[] | null = null;
  private readonly lookup: UserLookup = (ids) => directory(this.env).getUsers(ids);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, NAMESPACE_SCHEMA);
    this.log = new EventLog(this.sql);
    this.hooks = new Webhooks(ctx.storage, env, () => this.namespaceId ?? 0);
  }

  // ---- access requests ----

  // Each operation checks, in GitLab's order: the caller may see it (else 404 Group/Project
  // Not Found), the request is pending (else 404 Not found), the caller may do this (else 403).

  /** Pending requests, oldest first: one index range per page, the total from a counter. */
  async listAccessRequests(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<NamespaceResult<PageOf<AccessRequestRow>>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const standing = await this.standing(actor, (s) => mayManageRequests(kind, s));
    if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
    if (!mayManageRequests(kind, standing)) return fail(problems.forbidden());
    const items = this.sql
      .exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests ORDER BY seq LIMIT ? OFFSET ?`, limit, offset)
      .toArray();
    return ok({ total: this.counts().requests, items });
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

  // ---- members ----

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

  /**
   * A user's direct level here (0 for none) and this group's name, members whose expiry date has
   * come removed first: what a project or subgroup below asks of each ancestor group for a
   * membership inherited from it.
   */
  async directMembershipOf(userId: number): Promise<GroupMembership> {
    if (!this.load()) return { level: 0, group: '' };
    const settings = (this.settings ??= this.readSettings());
    if (settings.deleted) return { level: 0, group: settings.name };
    this.expireDue();
    return { level: this.directLevel(userId), group: settings.name };
  }

  /** Creates the object's state for a new group or project: its creator as Owner. */
  async initialize(ref: NamespaceRef): Promise<void> {
    await this.ready(ref);
  }

  // ---- audit events and webhooks ----

  /** Its audit events and those of everything below it, newest first (GitLab's audit events API). */
  async listAuditEvents(ref: NamespaceRef, actor: Actor, filter: AuditFilter, offset: number, limit: number): Promise<NamespaceResult<PageOf<LoggedEvent>>> {
    const reach = await this.readableEvents(ref, actor);
    if (!reach.ok) return reach;
    const page = this.log.list({ ...filter, ...reach.value }, offset, limit);
    return ok({ total: page.total, items: await this.log.withNames(page.items, this.lookup) });
  }

  /** One audit event of this log (`GET /:kind/:id/audit_events/:audit_event_id`), within what the caller may read. */
  async getAuditEvent(ref: NamespaceRef, actor: Actor, id: number): Promise<NamespaceResult<LoggedEvent>> {
    const reach = await this.readableEvents(ref, actor);
    if (!reach.ok) return reach;
    const found = this.log.find(id, reach.value);
    if (!found) return fail(problems.notFound());
    const [named] = await this.log.withNames([found], this.lookup);
    return ok(named ?? found);
  }

  async listHooks(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<NamespaceResult<PageOf<HookRow>>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    return ok(this.hooks.list(offset, limit));
  }

  async getHook(ref: NamespaceRef, actor: Actor, hookId: number): Promise<NamespaceResult<HookRow>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    return hook ? ok(hook) : fail(problems.notFound('Hook'));
  }

  /** A new hook; its signing secret is returned this once and kept only sealed. */
  async createHook(ref: NamespaceRef, actor: Actor, settings: HookSettings, instanceUrl: string): Promise<NamespaceResult<{ hook: HookRow; signingSecret: string }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const { uuid, signingSecret } = this.hooks.newSecrets();
    const sealed = await this.hooks.sealed(uuid, settings.token, signingSecret);
    return this.mutate(() => {
      if (this.hooks.count() >= MAX_HOOKS) return fail(problems.badRequest({ base: [`Maximum number of ${ref.kind} hooks (${MAX_HOOKS}) exceeded`] }));
      const hook = this.hooks.insert(uuid, settings, sealed, instanceUrl);
      this.record({ action: 'hook_created', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok({ hook, signingSecret });
    });
  }

  /**
   * Changes a hook (GitLab's `PUT …/hooks/:hook_id`): the fields given; a new URL without a new
   * token drops the old token, as in GitLab. Editing enables a disabled hook again.
   */
  async updateHook(ref: NamespaceRef, actor: Actor, hookId: number, change: Partial<HookSettings>): Promise<NamespaceResult<HookRow>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const before = this.hooks.get(hookId);
    if (!before) return fail(problems.notFound('Hook'));
    const url = change.url ?? before.url;
    const token = change.token !== undefined ? change.token : url === before.url ? await this.hooks.openToken(before) : null;
    const sealedToken = await this.hooks.sealToken(before.uuid, token);
    return this.mutate(() => {
      const current = this.hooks.get(hookId);
      if (!current) return fail(problems.notFound('Hook'));
      const settings: HookSettings = {
        url,
        name: change.name ?? current.name,
        description: change.description ?? current.description,
        token,
        member_events: change.member_events ?? current.member_events,
        access_request_events: change.access_request_events ?? current.access_request_events,
        enable_ssl_verification: change.enable_ssl_verification ?? current.enable_ssl_verification,
      };
      const hook = this.hooks.update(hookId, settings, sealedToken);
      this.record({ action: 'hook_updated', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok(hook);
    });
  }

  /** Deletes a hook with its queued deliveries and its log. */
  async deleteHook(ref: NamespaceRef, actor: Actor, hookId: number): Promise<NamespaceResult<null>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    return this.mutate(() => {
      const hook = this.hooks.get(hookId);
      if (!hook) return fail(problems.notFound('Hook'));
      this.hooks.remove(hookId);
      this.record({ action: 'hook_deleted', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok(null);
    });
  }

  /** A hook's delivery attempts of the last seven days, newest first. */
  async listHookEvents(
    ref: NamespaceRef,
    actor: Actor,
    hookId: number,
    status: StatusFilter | undefined,
    offset: number,
    limit: number,
  ): Promise<NamespaceResult<PageOf<HookLogRow>>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    if (!this.hooks.get(hookId)) return fail(problems.notFound('Hook'));
    return ok(this.hooks.logs(hookId, status, offset, limit));
  }

  /** Sends a logged delivery again, now: the same body, `webhook-id` and `Idempotency-Key`. */
  async resendHookEvent(ref: NamespaceRef, actor: Actor, hookId: number, logId: number): Promise<NamespaceResult<{ status: number | null }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    if (!hook) return fail(problems.notFound('Hook'));
    const entry = this.hooks.log(hookId, logId);
    if (!entry) return fail(problems.notFound());
    const result = await this.hooks.send(hook, { id: entry.event_uuid, body: entry.request_body }, entry.trigger);
    this.scheduleAlarm();
    return ok({ status: result.status });
  }

  /**
   * Sends a sample event to a hook now (GitLab's `POST …/hooks/:hook_id/test/:trigger`): the
   * caller added as a Developer, or asking for access; `"test": true` marks it.
   */
  async testHook(ref: NamespaceRef, actor: Actor, hookId: number, trigger: HookTrigger): Promise<NamespaceResult<{ ok: boolean; status: number | null; error: string | null }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    if (!hook) return fail(problems.notFound('Hook'));
    const caller = actorRef(actor);
    const sample = newEvent(
      this.entity(),
      trigger === 'member_events' ? { action: 'added', author: caller, user: caller, access_level: DEVELOPER } : { action: 'requested', author: caller, user: caller },
    );
    const body = JSON.stringify({ ...hookPayload(sample), test: true });
    const result = await this.hooks.send(hook, { id: sample.uuid, body }, trigger === 'member_events' ? 'member_hooks' : 'access_request_hooks');
    this.scheduleAlarm();
    return ok({ ok: result.ok, status: result.status, error: result.error });
  }

  /** Events of a subgroup or project below this group, copied up by its alarm (idempotent). */
  async receiveEvents(records: EventRecord[]): Promise<void> {
    this.load();
    this.ctx.storage.transactionSync(() => {
      for (const r of records) {
        const seq = this.log.append(r, false);
        if (seq !== null) this.hooks.enqueue(seq, r);
      }
    });
    this.scheduleAlarm();
  }

  /**
   * Events of this group or project recorded elsewhere: a settings change is recorded by the
   * Directory in the transaction that makes it, and handed over here (idempotent by uuid).
   */
  async recordEvents(records: EventDraft[]): Promise<void> {
    if (!this.load()) return;
    this.mutate(() => {
      for (const r of records) this.append(r);
      return ok(null);
    });
  }

  // ---- settings, deletion, and the requester index ----

  /**
   * Takes a newer copy of the registry row (after `PUT /groups/:id`, or a rename of an ancestor).
   * Older versions are ignored, so of two settings changes the later one wins in every object.
   */
  async applySnapshot(snapshot: NamespaceSnapshot): Promise<void> {
    if (!this.load()) return;
    this.takeSnapshot(snapshot);
    await this.push();
  }

  /**
   * The group or project was deleted from the registry: its members, requests and outbox go, its
   * tree's index partition drops its rows (`pushDeletion`), and every later call is told `Stale`,
   * so the caller looks it up again and finds nothing.
   */
  async markDeleted(): Promise<void> {
    if (!this.load()) return;
    this.ctx.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM members');
      this.sql.exec('DELETE FROM access_requests');
      this.sql.exec('DELETE FROM outbox');
      this.hooks.removeAll();
      this.sql.exec('UPDATE meta SET deleted = 1');
    });
    this.settings = null;
    this.nextExpiry = null;
    await this.ctx.storage.deleteAlarm();
    await this.pushDeletion();
  }

  /**
   * The index partition drops this deleted group's or project's rows; the alarm retries until it
   * has. An object that never learnt its tree (no push of it ever reached its partition) tells
   * every partition: the registry row is gone, so there is no asking where it was.
   */
  private async pushDeletion(): Promise<void> {
    const id = this.namespaceId ?? 0;
    const tree = this.knownTree();
    try {
      await Promise.all((tree ? [treeIndex(this.env, id, tree)] : allIndexPartitions(this.env)).map((p) => p.deleteSource(id)));
      this.sql.exec('UPDATE meta SET index_deleted = 1');
    } catch (e) {
      console.warn('the index partition could not drop a deleted namespace; the alarm will retry', this.namespaceId, e);
      void this.ctx.storage.setAlarm(clock.now() + PUSH_RETRY_MS);
    }
  }

  /** A user's pending request here disappears (they were blocked, deactivated or deleted); false when there was none. */
  async removePendingRequestOf(userId: number): Promise<boolean> {
    if (!this.load()) return false;
    const removed = this.mutate(() => {
      const gone = this.pendingRequest(userId);
      if (!gone) return ok(false);
      this.closeRequest(userId, { outcome: 'removed' });
      this.record({ action: 'discarded', author: null, user: requesterRef(gone), since: gone.requested_at });
      return ok(true);
    });
    await this.push();
    return removed.ok && removed.value;
  }

  /**
   * A deleted user's membership and pending request here disappear, in one transaction. No
   * last-Owner rule: the Directory refused to delete a group's only Owner.
   */
  async removeDeletedUser(userId: number): Promise<void> {
    if (!this.load()) return;
    this.mutate(() => {
      this.forget([userId], [userId]);
      return ok(null);
    });
    await this.push();
  }

  /** The names stored with a user's pending request follow a rename (`version`: of the users row; older never wins). */
  async renameRequester(userId: number, names: Requester, version: number): Promise<void> {
    if (!this.load()) return;
    this.rename([{ userId, ...names, version }]);
  }

  // ---- the membership index: outbox pushed to the tree's index partition ----

  /**
   * Delivers any member change still waiting in the outbox (after a crash, say) before a caller
   * reads the index partition, so what the index says includes every acknowledged change.
   * Returns whether nothing is left waiting.
   */
  async flushMembershipIndex(): Promise<boolean> {
    if (!this.load()) return true;
    this.expireDue();
    if (this.outboxSize() > 0) await this.push();
    return this.outboxSize() === 0;
  }

  /**
   * The object's one alarm: removes members whose expiry date has started, and retries membership
   * changes that could not be pushed when they happened. It is set for the earliest of the two.
   */
  async alarm(): Promise<void> {
    if (!this.load()) return;
    if (this.readSettings().deleted) {
      if (this.sql.exec<{ d: number }>('SELECT index_deleted AS d FROM meta').one().d === 0) await this.pushDeletion();
      return;
    }
    this.expireDue();
    await this.push();
    await this.forward();
    try {
      await this.hooks.run(this.log, this.lookup);
      this.hooks.prune();
    } catch (e) {
      console.error('webhook deliveries failed; the alarm will retry', this.namespaceId, e);
    }
    this.scheduleAlarm();
  }

  /**
   * Runs a read-then-write rule in one transaction. The triggers have written an outbox row for
   * any member change; the alarm is set before anything awaits, so it is stored with the change
   * itself (Durable Object writes without an intervening await are committed together).
   */
  private mutate<T>(rule: () => Result<T>): Result<T> {
    const result = this.ctx.storage.transactionSync(rule);
    if (result.ok) this.nextExpiry = undefined;
    this.scheduleAlarm();
    return result;
  }

  /**
   * One alarm for the earliest due time of all the object's background work: an outbox retry,
   * the next membership expiry, events to copy up, and webhook deliveries (docs/architecture.md).
   */
  private scheduleAlarm(): void {
    const now = clock.now();
    const retry = this.outboxSize() > 0 || this.sourceUnpushed() ? now + PUSH_RETRY_MS : Infinity;
    const expiry = this.earliestExpiry();
    this.forwardSince ??= this.log.oldestPendingForward();
    const pending = this.forwardSince;
    const forward = pending === null ? Infinity : Math.max(Date.parse(pending) + BACKGROUND_BATCH_MS, this.forwardRetryAt);
    const delivery = (this.hooks.nextDue() ?? Infinity) + BACKGROUND_BATCH_MS;
    // An alarm cannot be set past the year 2189 (workerd refuses it): a later expiry wakes the
    // object a year from now instead, and that alarm sets the next one.
    const expiryDue = expiry === null ? Infinity : Math.min(startOfDay(expiry), now + EXPIRY_HORIZON_MS);
    const due = Math.min(retry, expiryDue, forward, delivery);
    if (due === Infinity) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(due);
  }

  private earliestExpiry(): string | null {
    if (this.nextExpiry === undefined) {
      this.nextExpiry = this.sql.exec<{ d: string | null }>('SELECT MIN(expires_at) AS d FROM members WHERE expires_at IS NOT NULL').one().d;
    }
    return this.nextExpiry;
  }

  /**
   * Removes the members whose expiry date has started (00:00 UTC), in one transaction whose
   * triggers queue the removals for the membership index. Run by the alarm, and before any rule
   * is judged, so a late alarm never leaves an expired member in.
   */
  private expireDue(): void {
    const expiry = this.earliestExpiry();
    if (expiry === null || startOfDay(expiry) > clock.now()) return;
    this.mutate(() => {
      const expired = this.sql.exec<MemberRow>(`DELETE FROM members WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING ${MEMBER_COLUMNS}`, todayUtc());
      for (const member of expired) this.record({ action: 'expired', author: null, user: unnamed(member.user_id), ...membership(member) });
      return ok(null);
    });
  }

  /**
   * Pushes the outbox to the index partition of this group's or project's tree, oldest first, with
   * the object's copy of its registry row and its pending requesters' names; what was delivered is
   * deleted. A newer registry copy alone (a rename) is pushed too.
   */
  private async push(): Promise<void> {
    const namespaceId = this.namespaceId;
    if (namespaceId === null) return;
    for (;;) {
      const rows = this.sql
        .exec<OutboxRow>(
          `SELECT version, entry, user_id, access_level, created_at, created_by, expires_at, outcome, granted_level, decided_at
           FROM outbox ORDER BY version LIMIT ?`,
          PUSH_BATCH,
        )
        .toArray();
      if (rows.length === 0 && !this.sourceUnpushed()) return;
      const members: MembershipChange[] = rows
        .filter((r) => r.entry === 'member')
        .map((r) => ({
          userId: r.user_id,
          accessLevel: r.access_level,
          createdAt: r.created_at,
          createdBy: r.created_by,
          expiresAt: r.expires_at,
          version: r.version,
        }));
      const requests: RequestChange[] = rows
        .filter((r) => r.entry === 'request')
        .map((r) => ({
          userId: r.user_id,
          pending: r.access_level > 0,
          version: r.version,
          requestedAt: r.created_at,
          outcome: r.access_level > 0 ? null : r.outcome,
          grantedLevel: r.granted_level,
          expiresAt: r.expires_at,
          decidedBy: r.created_by,
          decidedAt: r.decided_at,
        }));
      const pending = requests.filter((r) => r.pending).map((r) => r.userId);
      const requesters = this.sql
        .exec<RequesterCopy>(
          'SELECT user_id AS userId, username, name, requester_version AS version FROM access_requests WHERE user_id IN (SELECT value FROM json_each(?))',
          JSON.stringify(pending),
        )
        .toArray();
      let reply: IndexReply;
      let source: SourceCopy;
      try {
        source = await this.sourceCopy();
        reply = await treeIndex(this.env, namespaceId, source.ancestorIds).applyChanges(source, members, requests, requesters);
      } catch (e) {
        console.warn('membership push failed; the alarm will retry', namespaceId, e);
        return;
      }
      this.ctx.storage.transactionSync(() => {
        if (rows.length > 0) this.sql.exec('DELETE FROM outbox WHERE version <= ?', rows[rows.length - 1].version);
        this.sql.exec('UPDATE meta SET source_pushed = MAX(source_pushed, ?)', source.version);
        // A user changed while this was being made (deleted, blocked, renamed): correct it here
        // too; the removals queue their own outbox rows, pushed by the next turn of this loop.
        this.forget(reply.departed, reply.inactive);
        this.rename(reply.requesters);
      });
      if (reply.departed.length > 0) this.nextExpiry = undefined;
      if (this.outboxSize() === 0 && !this.sourceUnpushed()) {
        this.scheduleAlarm();
        return;
      }
    }
  }

  /** The registry row's copy this object holds is newer than the one its index partition took. */
  private sourceUnpushed(): boolean {
    const settings = (this.settings ??= this.readSettings());
    if (settings.deleted || settings.version === 0) return false;
    return this.sql.exec<{ v: number }>('SELECT source_pushed AS v FROM meta').one().v < settings.version;
  }

  /** This group or project as its index partition shows it. */
  private async sourceCopy(): Promise<SourceCopy> {
    const s = (this.settings ??= this.readSettings());
    return { id: this.namespaceId ?? 0, kind: this.kind, name: s.name, full_path: s.fullPath, visibility: s.visibility, version: s.version, ancestorIds: await this.tree() };
  }

  /** Its ancestors, nearest first: as a caller gave them, or asked of the Directory once (Knock has no move). */
  private async tree(): Promise<number[]> {
    const known = this.knownTree();
    if (known) return known;
    const found = await directory(this.env).resolveNamespace(this.kind, this.namespaceId ?? 0);
    const ids = found?.ancestorIds ?? [];
    this.rememberTree(ids);
    return ids;
  }

  private knownTree(): number[] | null {
    if (this.treeIds !== null) return this.treeIds;
    const stored = this.sql.exec<{ tree_ids: string | null }>('SELECT tree_ids FROM meta').one().tree_ids;
    return stored === null ? null : (this.treeIds = JSON.parse(stored) as number[]);
  }

  private rememberTree(ids: number[]): void {
    this.treeIds = ids;
    this.sql.exec('UPDATE meta SET tree_ids = ? WHERE tree_ids IS NULL', JSON.stringify(ids));
  }

  // ---- events: recorded in the change's transaction, copied up by the alarm ----

  /** Records an event of this group or project in the running transaction, and queues its deliveries. */
  private record(input: NewEvent, entity: EventEntity = this.entity()): void {
    this.append(newEvent(entity, input));
  }

  /**
   * Appends an event of this object's own, to be copied up, and queues its deliveries. It gets its
   * audit id here, once (`eventId`: this group's or project's id and the event's number here).
   */
  private append(draft: EventDraft): void {
    const n = this.sql.exec<{ n: number }>('UPDATE meta SET events_numbered = events_numbered + 1 RETURNING events_numbered AS n').one().n;
    const e: EventRecord = { ...draft, id: eventId(this.namespaceId ?? draft.entity.id, n) };
    const seq = this.log.append(e, true);
    if (seq === null) return;
    if (this.forwardSince === null) this.forwardSince = e.created_at;
    this.hooks.enqueue(seq, e);
  }

  /** This group or project as its events describe it. */
  private entity(): EventEntity {
    const s = (this.settings ??= this.readSettings());
    return { id: this.namespaceId ?? 0, kind: this.kind, full_path: s.fullPath, name: s.name, visibility: s.visibility };
  }

  /**
   * Copies this object's new events to its ancestor groups' objects and to the instance log.
   * Each receiver keeps an event once however often it arrives, so a batch is sent again whole
   * until every receiver has taken it.
   */
  private async forward(): Promise<void> {
    if (clock.now() < this.forwardRetryAt) return;
    try {
      const ancestors = await this.ancestorGroups();
      for (;;) {
        const batch = this.log.pendingForward(FORWARD_BATCH);
        if (batch.length === 0) {
          this.forwardSince = null;
          return;
        }
        const records = batch.map((b) => b.record);
        await Promise.all([auditLog(this.env, this.namespaceId ?? records[0].entity.id).receiveEvents(records), ...ancestors.map((id) => namespaceObject(this.env, id).receiveEvents(records))]);
        this.log.markForwarded(batch.map((b) => b.seq));
      }
    } catch (e) {
      console.warn('events could not be copied to the ancestor groups; the alarm will retry', this.namespaceId, e);
      this.forwardRetryAt = clock.now() + PUSH_RETRY_MS;
    }
  }

  /**
   * The groups above this one, nearest first, asked of the Directory once and then kept (Knock
   * has no transfer, so they never change). A project in a personal namespace has none.
   */
  private async ancestorGroups(): Promise<number[]> {
    const stored = this.sql.exec<{ ancestor_ids: string | null }>('SELECT ancestor_ids FROM meta').one().ancestor_ids;
    if (stored !== null) return JSON.parse(stored) as number[];
    const found = await directory(this.env).resolveNamespace(this.kind, this.namespaceId ?? 0);
    const ids = !found || found.namespace.parent?.kind !== 'group' ? [] : found.ancestorIds;
    this.sql.exec('UPDATE meta SET ancestor_ids = ?', JSON.stringify(ids));
    return ids;
  }

  /**
   * `ready`, then the caller may see it (else 404 Group/Project Not Found) and `may` holds (else
   * 403); their standing. `settles` is as for `standing`: by default `may` itself.
   */
  private async permitted(ref: NamespaceRef, actor: Actor, may: (s: Standing) => boolean, settles = may): Promise<Result<Standing> | Stale> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const standing = await this.standing(actor, settles);
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    if (!may(standing)) return fail(problems.forbidden());
    return ok(standing);
  }

  /**
   * Which of its audit events the caller may read (`auditEventReach`): all of them (an empty
   * filter) or their own, or 403 when none.
   */
  private async readableEvents(ref: NamespaceRef, actor: Actor): Promise<Result<Pick<AuditFilter, 'authorId'>> | Stale> {
    const kind = KINDS[ref.kind];
    const standing = await this.permitted(ref, actor, (s) => auditEventReach(kind, s) !== 'none', (s) => auditEventReach(kind, s) === 'all');
    if (!standing.ok) return standing;
    return ok(auditEventReach(kind, standing.value) === 'own' ? { authorId: actor.userId } : {});
  }

  // ---- helpers ----

  /** Removes these users' memberships and these users' pending requests (the triggers queue both). */
  private forget(members: number[], requesters: number[]): void {
    if (members.length > 0) this.sql.exec('DELETE FROM members WHERE user_id IN (SELECT value FROM json_each(?))', JSON.stringify(members));
    if (requesters.length > 0) this.sql.exec('DELETE FROM access_requests WHERE user_id IN (SELECT value FROM json_each(?))', JSON.stringify(requesters));
  }

  /** Stores requesters' newer names; names from an older users row never replace newer ones. */
  private rename(requesters: IndexReply['requesters']): void {
    for (const r of requesters) {
      this.sql.exec(
        'UPDATE access_requests SET username = ?, name = ?, requester_version = ? WHERE user_id = ? AND requester_version < ?',
        r.username,
        r.name,
        r.version,
        r.userId,
        r.version,
      );
    }
  }

  /** Whether this object has state yet; records which namespace it is. */
  private load(): boolean {
    if (this.namespaceId !== null) return true;
    const meta = this.sql.exec<{ namespace_id: number; kind: NamespaceKind }>('SELECT namespace_id, kind FROM meta').toArray()[0];
    if (!meta) return false;
    this.namespaceId = meta.namespace_id;
    this.kind = meta.kind;
    return true;
  }

  /**
   * Before each rule: the first call records which namespace this is and makes its creator Owner
   * (idempotent); a newer registry snapshot is taken; a deleted object, or a full path from a
   * cache older than the object's copy, answers `Stale`; members whose date has come are removed.
   */
  private async ready(ref: NamespaceRef): Promise<Result<Settings> | Stale> {
    if (!this.load()) {
      const entity: EventEntity = { id: ref.id, kind: ref.kind, full_path: ref.snapshot.full_path, name: ref.snapshot.name, visibility: ref.snapshot.visibility };
      this.mutate(() => {
        this.sql.exec('INSERT INTO meta (singleton, namespace_id, kind) VALUES (1, ?, ?)', ref.id, ref.kind);
        if (ref.creatorId !== null) {
          const creator = this.sql
            .exec<MemberRow>(`INSERT INTO members (user_id, access_level, created_at) VALUES (?, ?, ?) RETURNING ${MEMBER_COLUMNS}`, ref.creatorId, OWNER, ref.createdAt)
            .one();
          const user = unnamed(ref.creatorId);
          this.record({ action: 'added', author: user, user, ...membership(creator) }, entity);
        }
        return ok(null);
      });
      this.namespaceId = ref.id;
      this.kind = ref.kind;
      if (ref.ancestorIds) this.rememberTree(ref.ancestorIds);
      this.takeSnapshot(ref.snapshot);
      await this.push();
    }
    if (this.namespaceId !== ref.id) throw new Error(`namespace object ${this.namespaceId} called as ${ref.id}`);
    if (ref.ancestorIds && this.treeIds === null) this.rememberTree(ref.ancestorIds);
    const settings = this.takeSnapshot(ref.snapshot);
    if (settings.deleted) return STALE;
    if (ref.byPath && ref.snapshot.version < settings.version) return STALE;
    const expiry = this.earliestExpiry();
    if (expiry !== null && expiry <= todayUtc()) {
      this.expireDue();
      await this.push();
    }
    return ok(settings);
  }

  /** The object's copy of its registry row, replaced by `snapshot` when that is newer. */
  private takeSnapshot(snapshot: NamespaceSnapshot): Settings {
    this.settings ??= this.readSettings();
    if (snapshot.version > this.settings.version && !this.settings.deleted) {
      this.sql.exec(
        'UPDATE meta SET visibility = ?, request_access_enabled = ?, full_path = ?, name = ?, registry_version = ?',
        snapshot.visibility,
        snapshot.request_access_enabled ? 1 : 0,
        snapshot.full_path,
        snapshot.name,
        snapshot.version,
      );
      this.settings = {
        visibility: snapshot.visibility,
        requestAccessEnabled: snapshot.request_access_enabled,
        fullPath: snapshot.full_path,
        name: snapshot.name,
        version: snapshot.version,
        deleted: false,
      };
    }
    return this.settings;
  }

  private readSettings(): Settings {
    const m = this.sql
      .exec<{
        visibility: Visibility | null;
        request_access_enabled: number | null;
        full_path: string | null;
        name: string | null;
        registry_version: number;
        deleted: number;
      }>('SELECT visibility, request_access_enabled, full_path, name, registry_version, deleted FROM meta')
      .one();
    return {
      visibility: m.visibility ?? 'private',
      requestAccessEnabled: m.request_access_enabled === 1,
      fullPath: m.full_path ?? '',
      name: m.name ?? '',
      version: m.registry_version,
      deleted: m.deleted === 1,
    };
  }

  /** Whether this change leaves a group that keeps an Owner (GitLab's groups) with none. */
  private wouldLoseLastOwner(kind: Kind, member: MemberRow, newLevel: number): boolean {
    if (!kind.keepsAnOwner || member.access_level !== OWNER || newLevel === OWNER) return false;
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM members WHERE access_level = ?', OWNER).one().n <= 1;
  }

  /**
   * Where the caller stands here. The inherited level is as given; or taken as 0 without asking,
   * when the direct standing already satisfies `settles` (policy predicates only turn true as the
   * level rises, see `directStanding`); or else asked of each ancestor group's own object, the
   * authority on its members (one call each, at once), and the highest taken. `settles` must
   * imply every check the operation then makes, so each comes out as it would with the real
   * inherited level. Callers apply the rule in the same synchronous turn as this returns in.
   */
  private async standing(actor: Actor, settles: (s: Standing) => boolean): Promise<Standing> {
    const direct = directStanding(actor.admin, this.directLevel(actor.userId));
    if (typeof actor.inherited === 'number') return { ...direct, inherited: actor.inherited };
    if (settles(direct)) return direct;
    const memberships = await Promise.all(actor.inherited.ancestorIds.map((id) => namespaceObject(this.env, id).directMembershipOf(actor.userId)));
    const inherited = Math.max(0, ...memberships.map((m) => m.level));
    // Other calls may have run while this one waited: read direct membership again.
    return { ...directStanding(actor.admin, this.directLevel(actor.userId)), inherited };
  }

  /**
   * The highest membership `userId` holds in the groups above this one (GitLab's
   * `highest_group_member`), asked of each group's own object at once; null when they hold none,
   * or when none could be above `level` (Owner) and there is nothing to ask.
   */
  private async inheritedMembership(userId: number, level: number): Promise<GroupMembership | null> {
    if (level >= OWNER) return null;
    const ancestors = await this.ancestorGroups();
    const found = await Promise.all(ancestors.map((id) => namespaceObject(this.env, id).directMembershipOf(userId)));
    return found.reduce<GroupMembership | null>((best, m) => (m.level > (best?.level ?? 0) ? m : best), null);
  }

  private directLevel(userId: number): number {
    return this.member(userId)?.access_level ?? 0;
  }

  private member(userId: number): MemberRow | null {
    return this.sql.exec<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members WHERE user_id = ?`, userId).toArray()[0] ?? null;
  }

  private pendingRequest(userId: number): AccessRequestRow | null {
    return (
      this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests WHERE user_id = ?`, userId).toArray()[0] ?? null
    );
  }

  /**
   * Deletes a user's pending request, first writing on its row how it ended, so the delete
   * trigger's outbox row carries the outcome (same transaction). Returns whether there was one.
   */
  private closeRequest(userId: number, closing: Closing): boolean {
    const granted = closing.outcome === 'approved' ? closing : null;
    this.sql.exec(
      'UPDATE access_requests SET outcome = ?, granted_level = ?, granted_expires_at = ?, decided_by = ?, decided_at = ? WHERE user_id = ?',
      closing.outcome,
      granted?.level ?? null,
      granted?.expiresAt ?? null,
      'by' in closing ? closing.by : null,
      isoNow(),
      userId,
    );
    return this.sql.exec('DELETE FROM access_requests WHERE user_id = ? RETURNING user_id', userId).toArray().length > 0;
  }

  private counts(): { members: number; requests: number } {
    return this.sql.exec<{ members: number; requests: number }>('SELECT members, requests FROM meta').one();
  }

  private outboxSize(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM outbox').one().n;
  }
}

/** The Durable Object of one group or project, named by its id. */
export const namespaceObject = (env: Env, id: number) => env.NAMESPACES.getByName(String(id));
