import { DurableObject } from 'cloudflare:workers';
import { OWNER, type NamespaceKind } from '../../shared/access-levels';
import { directStanding, hasAccess, KINDS, mayGrantLevel, mayManageRequests, maySee, type Standing } from '../auth/policy';
import { clock, isoNow } from '../clock';
import type { Visibility } from '../../shared/api-types';
import type { Env } from '../env';
import { problems } from '../errors';
import { directory } from './directory';
import { migrate } from './migrations';
import type { MembershipChange } from './namespace-registry';
import { namespaceMigrations } from './namespace-schema';
import { fail, ok, type Result } from './result';

/** Which group or project an object is, as the Directory knows it (passed on every call). */
export interface NamespaceRef {
  id: number;
  kind: NamespaceKind;
  creatorId: number | null;
  createdAt: string;
  /** A caller who may not see it is told 404 before anything else, as GitLab does. */
  visibility: Visibility;
}

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

/** How long before an unpushed membership change is retried. */
const PUSH_RETRY_MS = 10_000;
const PUSH_BATCH = 100;

/**
 * One group or project: its members and access requests, in SQLite. Every rule that reads and
 * then writes runs in one synchronous transaction, so concurrent calls cannot interleave: of two
 * approvals of one request exactly one finds it.
 */
export class Namespace extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private namespaceId: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, namespaceMigrations);
  }

  // ---- access requests ----

  // Each operation checks, in GitLab's order: the caller may see it (else 404 Group/Project
  // Not Found), the request is pending (else 404 Not found), the caller may do this (else 403).

  /** Pending requests, oldest first: one index range per page, the total from a counter. */
  async listAccessRequests(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<Result<PageOf<AccessRequestRow>>> {
    await this.ready(ref);
    const kind = KINDS[ref.kind];
    const standing = await this.standing(actor, (s) => mayManageRequests(kind, s));
    if (!maySee(ref.visibility, standing)) return fail(kind.notFound());
    if (!mayManageRequests(kind, standing)) return fail(problems.forbidden());
    const items = this.sql
      .exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests ORDER BY seq LIMIT ? OFFSET ?`, limit, offset)
      .toArray();
    return ok({ total: this.counts().requests, items });
  }

  async requestAccess(ref: NamespaceRef, actor: Actor, requestAccessEnabled: boolean, requester: Requester): Promise<Result<AccessRequestRow>> {
    await this.ready(ref);
    const kind = KINDS[ref.kind];
    // Being a direct member settles it (403); anyone else may still be a member through a group.
    const standing = await this.standing(actor, hasAccess);
    if (!maySee(ref.visibility, standing)) return fail(kind.notFound());
    if (hasAccess(standing)) return fail(problems.forbidden());
    if (this.pendingRequest(actor.userId)) return fail(problems.badRequest({ user_id: ['already exists in source'] }));
    if (!requestAccessEnabled) return fail(problems.forbidden());
    const row = this.sql
      .exec<AccessRequestRow>(
        `INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?) RETURNING ${REQUEST_COLUMNS}`,
        actor.userId,
        isoNow(),
        requester.username,
        requester.name,
      )
      .one();
    return ok(row);
  }

  /** The request disappears and the member appears in one transaction, or neither happens. */
  async approveAccessRequest(ref: NamespaceRef, actor: Actor, userId: number, accessLevel: number): Promise<Result<ApprovedMemberRow>> {
    await this.ready(ref);
    const kind = KINDS[ref.kind];
    const standing = await this.standing(actor, (s) => mayManageRequests(kind, s) && mayGrantLevel(kind, s, accessLevel));
    const result = this.mutate((): Result<ApprovedMemberRow> => {
      if (!maySee(ref.visibility, standing)) return fail(kind.notFound());
      const request = this.pendingRequest(userId);
      if (!request) return fail(problems.notFound());
      if (!mayManageRequests(kind, standing) || !mayGrantLevel(kind, standing, accessLevel)) return fail(problems.forbidden());
      this.sql.exec('DELETE FROM access_requests WHERE user_id = ?', userId);
      const member = this.sql
        .exec<MemberRow>(
          `INSERT INTO members (user_id, access_level, created_at, created_by) VALUES (?, ?, ?, ?)
           ON CONFLICT (user_id) DO UPDATE SET access_level = excluded.access_level, created_by = excluded.created_by
           RETURNING user_id, access_level, created_at, created_by, expires_at`,
          userId,
          accessLevel,
          request.requested_at,
          actor.userId,
        )
        .one();
      return ok({ ...member, username: request.username, name: request.name });
    });
    await this.push();
    return result;
  }

  /** Deny (by a manager) or withdraw (by the requester). */
  async removeAccessRequest(ref: NamespaceRef, actor: Actor, userId: number): Promise<Result<null>> {
    await this.ready(ref);
    const kind = KINDS[ref.kind];
    const withdrawing = userId === actor.userId;
    const permitted = (s: Standing) => (withdrawing ? maySee(ref.visibility, s) : mayManageRequests(kind, s));
    const standing = await this.standing(actor, permitted);
    if (!maySee(ref.visibility, standing)) return fail(kind.notFound());
    if (!this.pendingRequest(userId)) return fail(problems.notFound());
    if (!permitted(standing)) return fail(problems.forbidden());
    this.sql.exec('DELETE FROM access_requests WHERE user_id = ?', userId);
    return ok(null);
  }

  // ---- members ----

  /** Direct members, oldest first; 404 when the caller may not see the group or project. */
  async listMembers(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<Result<PageOf<MemberRow>>> {
    await this.ready(ref);
    const standing = await this.standing(actor, (s) => maySee(ref.visibility, s));
    if (!maySee(ref.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    const items = this.sql
      .exec<MemberRow>('SELECT user_id, access_level, created_at, created_by, expires_at FROM members ORDER BY seq LIMIT ? OFFSET ?', limit, offset)
      .toArray();
    return ok({ total: this.counts().members, items });
  }

  /** Where the caller stands on this group or project; 404 when they may not see it. */
  async standingOf(ref: NamespaceRef, actor: Actor): Promise<Result<Standing>> {
    await this.ready(ref);
    const standing = await this.standing(actor, () => false);
    if (!maySee(ref.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    return ok(standing);
  }

  /** Creates the object's state for a new group or project: its creator as Owner. */
  async initialize(ref: NamespaceRef): Promise<void> {
    await this.ready(ref);
  }

  // ---- the membership index: outbox pushed to the Directory ----

  /**
   * Delivers any member change still waiting in the outbox (after a crash, say) before a caller
   * reads the Directory's index, so what the index says includes every acknowledged change.
   * Returns whether nothing is left waiting.
   */
  async flushMembershipIndex(): Promise<boolean> {
    if (this.namespaceId === null) {
      const meta = this.sql.exec<{ namespace_id: number }>('SELECT namespace_id FROM meta').toArray()[0];
      if (!meta) return true;
      this.namespaceId = meta.namespace_id;
    }
    if (this.outboxSize() > 0) await this.push();
    return this.outboxSize() === 0;
  }

  /** Retries membership changes that could not be pushed when they happened. */
  async alarm(): Promise<void> {
    await this.push();
    if (this.outboxSize() > 0) await this.ctx.storage.setAlarm(clock.now() + PUSH_RETRY_MS);
  }

  /**
   * Runs a read-then-write rule in one transaction. The triggers have written an outbox row for
   * any member change; the retry alarm is set before anything awaits, so it is stored with the
   * change itself (Durable Object writes without an intervening await are committed together).
   */
  private mutate<T>(rule: () => Result<T>): Result<T> {
    const result = this.ctx.storage.transactionSync(rule);
    if (this.outboxSize() > 0) void this.ctx.storage.setAlarm(clock.now() + PUSH_RETRY_MS);
    return result;
  }

  /** Pushes the outbox to the Directory, oldest first; what was delivered is deleted. */
  private async push(): Promise<void> {
    const namespaceId = this.namespaceId;
    if (namespaceId === null) return;
    for (;;) {
      const rows = this.sql
        .exec<{ version: number; user_id: number; access_level: number; created_at: string; created_by: number | null }>(
          'SELECT version, user_id, access_level, created_at, created_by FROM outbox ORDER BY version LIMIT ?',
          PUSH_BATCH,
        )
        .toArray();
      if (rows.length === 0) return;
      const changes: MembershipChange[] = rows.map((r) => ({
        userId: r.user_id,
        accessLevel: r.access_level,
        createdAt: r.created_at,
        createdBy: r.created_by,
        version: r.version,
      }));
      try {
        await directory(this.env).applyMembershipChanges(namespaceId, changes);
      } catch (e) {
        console.warn('membership push failed; the alarm will retry', namespaceId, e);
        return;
      }
      this.sql.exec('DELETE FROM outbox WHERE version <= ?', rows[rows.length - 1].version);
      if (this.outboxSize() === 0) {
        void this.ctx.storage.deleteAlarm();
        return;
      }
    }
  }

  // ---- helpers ----

  /** First call: records which namespace this is and makes its creator Owner. Idempotent. */
  private async ready(ref: NamespaceRef): Promise<void> {
    if (this.namespaceId === ref.id) return;
    const meta = this.sql.exec<{ namespace_id: number }>('SELECT namespace_id FROM meta').toArray()[0];
    if (meta) {
      if (meta.namespace_id !== ref.id) throw new Error(`namespace object ${meta.namespace_id} called as ${ref.id}`);
      this.namespaceId = meta.namespace_id;
      return;
    }
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
    const row = this.sql.exec<{ access_level: number }>('SELECT access_level FROM members WHERE user_id = ?', userId).toArray()[0];
    return row?.access_level ?? 0;
  }

  private pendingRequest(userId: number): AccessRequestRow | null {
    return (
      this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests WHERE user_id = ?`, userId).toArray()[0] ?? null
    );
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
