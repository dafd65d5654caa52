import { DurableObject } from 'cloudflare:workers';
import { OWNER, type NamespaceKind } from '../../shared/access-levels';
import {
  directStanding,
  hasAccess,
  KINDS,
  mayGrantLevel,
  mayManageMemberAt,
  mayManageMembers,
  mayManageRequests,
  maySee,
  type Kind,
  type Standing,
} from '../auth/policy';
import { clock, isoNow, todayUtc } from '../clock';
import type { Visibility } from '../../shared/api-types';
import type { Env } from '../env';
import { problems } from '../errors';
import { directory } from './directory';
import { migrate } from './migrations';
import type { MembershipChange, NamespaceSnapshot, RequestChange, RequestOutcome } from './namespace-registry';
import { namespaceMigrations } from './namespace-schema';
import { fail, ok, type Result } from './result';

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
 * inherited from ancestor groups is either known already, or the ancestors to ask the
 * Directory's index about, which the object does only when direct membership (or being an
 * administrator) does not settle the rule at hand.
 */
export interface Actor {
  userId: number;
  admin: boolean;
  inherited: number | { ancestorIds: number[] };
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

/** How long before an unpushed membership change is retried. */
const PUSH_RETRY_MS = 10_000;
const PUSH_BATCH = 100;

/** When a membership expiring on `date` ends: 00:00 UTC that day. */
const startOfDay = (date: string): number => Date.parse(`${date}T00:00:00Z`);

/** The object's own copy of its registry row (see `NamespaceRef.snapshot`). */
interface Settings {
  visibility: Visibility;
  requestAccessEnabled: boolean;
  fullPath: string;
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

/** How a pending request ends, written on its row just before it is deleted (see namespace-schema.ts). */
type Closing =
  | { outcome: 'approved'; by: number; level: number; expiresAt: string | null }
  | { outcome: 'denied' | 'withdrawn'; by: number }
  | { outcome: 'removed' };

/** GitLab's answer when the last Owner of a group would go (`forbidden!` with a reason). */
const lastOwner = () => ({ status: 403, body: { message: '403 Forbidden - A group must have at least one owner' } }) as const;

/**
 * One group or project: its members and access requests, in SQLite. Every rule that reads and
 * then writes runs in one synchronous transaction, so concurrent calls cannot interleave: of two
 * approvals of one request exactly one finds it.
 */
export class Namespace extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private namespaceId: number | null = null;
  private settings: Settings | null = null;
  /** The earliest `expires_at` of any member; undefined until read. */
  private nextExpiry: string | null | undefined = undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, namespaceMigrations);
    // Rows a migration queued have no alarm yet: deliver them soon (the alarm sets the next one).
    if (this.outboxSize() > 0) void ctx.storage.setAlarm(clock.now());
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
      return ok(
        this.sql
          .exec<AccessRequestRow>(
            `INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?) RETURNING ${REQUEST_COLUMNS}`,
            actor.userId,
            isoNow(),
            requester.username,
            requester.name,
          )
          .one(),
      );
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
    const standing = await this.standing(actor, (s) => mayManageRequests(kind, s) && mayGrantLevel(kind, s, accessLevel));
    const result = this.mutate((): Result<ApprovedMemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      const request = this.pendingRequest(userId);
      if (!request) return fail(problems.notFound());
      if (!mayManageRequests(kind, standing) || !mayGrantLevel(kind, standing, accessLevel)) return fail(problems.forbidden());
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
      if (!this.pendingRequest(userId)) return fail(problems.notFound());
      if (!permitted(standing)) return fail(problems.forbidden());
      this.closeRequest(userId, { outcome: withdrawing ? 'withdrawn' : 'denied', by: actor.userId });
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
    const standing = await this.standing(actor, permitted);
    const result = this.mutate((): Result<MemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      if (!mayManageMembers(kind, standing)) return fail(problems.forbidden());
      if (!user) return fail(problems.notFound('User'));
      if (this.member(userId)) return fail(problems.conflict('Member already exists'));
      if (!mayGrantLevel(kind, standing, accessLevel)) return fail(problems.forbidden());
      // Being added answers a pending request as an approval would.
      this.closeRequest(userId, { outcome: 'approved', by: actor.userId, level: accessLevel, expiresAt });
      return ok(
        this.sql
          .exec<MemberRow>(
            `INSERT INTO members (user_id, access_level, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${MEMBER_COLUMNS}`,
            userId,
            accessLevel,
            isoNow(),
            actor.userId,
            expiresAt,
          )
          .one(),
      );
    });
    await this.push();
    return result;
  }

  /** Changes a member's level and/or expiry (`PUT /:kind/:id/members/:user_id`). */
  async updateMember(
    ref: NamespaceRef,
    actor: Actor,
    userId: number,
    change: { accessLevel?: number; expiresAt?: string | null },
  ): Promise<NamespaceResult<MemberRow>> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const kind = KINDS[ref.kind];
    const current = this.member(userId);
    const permitted = (s: Standing) =>
      mayManageMemberAt(kind, s, current?.access_level ?? 0) && (change.accessLevel === undefined || mayGrantLevel(kind, s, change.accessLevel));
    const standing = await this.standing(actor, permitted);
    const result = this.mutate((): Result<MemberRow> => {
      if (!maySee(here.value.visibility, standing)) return fail(kind.notFound());
      if (!mayManageMembers(kind, standing)) return fail(problems.forbidden());
      const member = this.member(userId);
      if (!member) return fail(problems.notFound('Member'));
      if (!mayManageMemberAt(kind, standing, member.access_level)) return fail(problems.forbidden());
      const level = change.accessLevel ?? member.access_level;
      if (change.accessLevel !== undefined && !mayGrantLevel(kind, standing, level)) return fail(problems.forbidden());
      if (this.wouldLoseLastOwner(kind, member, level)) return fail(lastOwner());
      const expiresAt = change.expiresAt === undefined ? member.expires_at : change.expiresAt;
      return ok(
        this.sql
          .exec<MemberRow>(`UPDATE members SET access_level = ?, expires_at = ? WHERE user_id = ? RETURNING ${MEMBER_COLUMNS}`, level, expiresAt, userId)
          .one(),
      );
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

  /** Creates the object's state for a new group or project: its creator as Owner. */
  async initialize(ref: NamespaceRef): Promise<void> {
    await this.ready(ref);
  }

  // ---- settings, deletion, and the requester index ----

  /**
   * Takes a newer copy of the registry row (after `PUT /groups/:id`, or a rename of an ancestor).
   * Older versions are ignored, so of two settings changes the later one wins in every object.
   */
  async applySnapshot(snapshot: NamespaceSnapshot): Promise<void> {
    if (!this.load()) return;
    this.takeSnapshot(snapshot);
  }

  /**
   * The group or project was deleted from the registry: its members, requests and outbox go (the
   * Directory dropped its index rows in the same transaction as the registry row), and every
   * later call is told `Stale`, so the caller looks it up again and finds nothing.
   */
  async markDeleted(): Promise<void> {
    if (!this.load()) return;
    this.ctx.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM members');
      this.sql.exec('DELETE FROM access_requests');
      this.sql.exec('DELETE FROM outbox');
      this.sql.exec('UPDATE meta SET deleted = 1');
    });
    this.settings = null;
    this.nextExpiry = null;
    await this.ctx.storage.deleteAlarm();
  }

  /** A user's pending request here disappears (they were blocked or deleted); false when there was none. */
  async removePendingRequestOf(userId: number): Promise<boolean> {
    if (!this.load()) return false;
    const removed = this.mutate(() => ok(this.closeRequest(userId, { outcome: 'removed' })));
    await this.push();
    return removed.ok && removed.value;
  }

  /** The names stored with a user's pending request follow a rename. */
  async renameRequester(userId: number, names: Requester): Promise<void> {
    if (!this.load()) return;
    this.sql.exec('UPDATE access_requests SET username = ?, name = ? WHERE user_id = ?', names.username, names.name, userId);
  }

  // ---- the membership index: outbox pushed to the Directory ----

  /**
   * Delivers any member change still waiting in the outbox (after a crash, say) before a caller
   * reads the Directory's index, so what the index says includes every acknowledged change.
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
    this.expireDue();
    await this.push();
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

  /** One alarm for the earliest due time: an outbox retry, or the next membership expiry. */
  private scheduleAlarm(): void {
    const retry = this.outboxSize() > 0 ? clock.now() + PUSH_RETRY_MS : Infinity;
    const expiry = this.earliestExpiry();
    const due = Math.min(retry, expiry === null ? Infinity : startOfDay(expiry));
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
      this.sql.exec('DELETE FROM members WHERE expires_at IS NOT NULL AND expires_at <= ?', todayUtc());
      return ok(null);
    });
  }

  /** Pushes the outbox to the Directory, oldest first; what was delivered is deleted. */
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
      if (rows.length === 0) return;
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
          // Rows queued before outcomes were recorded say nothing of why the request went.
          outcome: r.access_level > 0 ? null : (r.outcome ?? 'removed'),
          grantedLevel: r.granted_level,
          expiresAt: r.expires_at,
          decidedBy: r.created_by,
          decidedAt: r.decided_at,
        }));
      try {
        await directory(this.env).applyMembershipChanges(namespaceId, members, requests);
      } catch (e) {
        console.warn('membership push failed; the alarm will retry', namespaceId, e);
        return;
      }
      this.sql.exec('DELETE FROM outbox WHERE version <= ?', rows[rows.length - 1].version);
      if (this.outboxSize() === 0) {
        this.scheduleAlarm();
        return;
      }
    }
  }

  // ---- helpers ----

  /** Whether this object has state yet; records which namespace it is. */
  private load(): boolean {
    if (this.namespaceId !== null) return true;
    const meta = this.sql.exec<{ namespace_id: number }>('SELECT namespace_id FROM meta').toArray()[0];
    if (!meta) return false;
    this.namespaceId = meta.namespace_id;
    return true;
  }

  /**
   * Before each rule: the first call records which namespace this is and makes its creator Owner
   * (idempotent); a newer registry snapshot is taken; a deleted object, or a full path from a
   * cache older than the object's copy, answers `Stale`; members whose date has come are removed.
   */
  private async ready(ref: NamespaceRef): Promise<Result<Settings> | Stale> {
    if (!this.load()) {
      this.mutate(() => {
        this.sql.exec('INSERT INTO meta (singleton, namespace_id, kind) VALUES (1, ?, ?)', ref.id, ref.kind);
        if (ref.creatorId !== null) {
          this.sql.exec('INSERT INTO members (user_id, access_level, created_at) VALUES (?, ?, ?)', ref.creatorId, OWNER, ref.createdAt);
        }
        return ok(null);
      });
      this.namespaceId = ref.id;
      await this.push();
    }
    if (this.namespaceId !== ref.id) throw new Error(`namespace object ${this.namespaceId} called as ${ref.id}`);
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
        'UPDATE meta SET visibility = ?, request_access_enabled = ?, full_path = ?, registry_version = ?',
        snapshot.visibility,
        snapshot.request_access_enabled ? 1 : 0,
        snapshot.full_path,
        snapshot.version,
      );
      this.settings = {
        visibility: snapshot.visibility,
        requestAccessEnabled: snapshot.request_access_enabled,
        fullPath: snapshot.full_path,
        version: snapshot.version,
        deleted: false,
      };
    }
    return this.settings;
  }

  private readSettings(): Settings {
    const m = this.sql
      .exec<{ visibility: Visibility | null; request_access_enabled: number | null; full_path: string | null; registry_version: number; deleted: number }>(
        'SELECT visibility, request_access_enabled, full_path, registry_version, deleted FROM meta',
      )
      .one();
    return {
      visibility: m.visibility ?? 'private',
      requestAccessEnabled: m.request_access_enabled === 1,
      fullPath: m.full_path ?? '',
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
   * level rises, see `directStanding`); or else asked of the Directory's index. `settles` must
   * imply every check the operation then makes, so each comes out as it would with the real
   * inherited level. Callers apply the rule in the same synchronous turn as this returns in.
   */
  private async standing(actor: Actor, settles: (s: Standing) => boolean): Promise<Standing> {
    const direct = directStanding(actor.admin, this.directLevel(actor.userId));
    if (typeof actor.inherited === 'number') return { ...direct, inherited: actor.inherited };
    if (settles(direct)) return direct;
    const inherited = await directory(this.env).inheritedLevel(actor.userId, actor.inherited.ancestorIds);
    // Other calls may have run while this one waited: read direct membership again.
    return { ...directStanding(actor.admin, this.directLevel(actor.userId)), inherited };
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
