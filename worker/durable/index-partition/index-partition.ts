import { DurableObject } from 'cloudflare:workers';
import { clock, isoNow, todayUtc } from '../../clock';
import type { Env } from '../../env';
import type { UserRow, UserSnapshot } from '../directory/types';
import { userObject } from '../user/user';
import type { InboxFilter, InboxPage, KnownVersion } from '../user/inbox';
import { everyRequest, inboxDeliveries, inboxDelivered, inboxOutboxWaiting, inboxResync, requesterChanged, sourcesRenamed, requestsDeletedWith, type OwnRequestRow } from './inbox-index';
import { groupMembershipsOf, soleOwnedGroupsOf, twoFactorRequiredBy, type GroupMemberships } from './group-memberships';
import { claimChecksWaiting, levelsBefore, queueAllMembers, queueLowered, sendClaimChecks } from './claim-checks';
import { INDEX_PARTITION_SCHEMA } from './schema';
import { alertsOf, type AccessAlertRow } from './alerts';
import { migrate } from '../migrations';
import {
  applyMembershipChanges,
  listNamespaces,
  pendingRequestsOf,
  resolveNamespace,
  visibleOwnRequests,
  type ListFilter,
  type MembershipChange,
  type NamespaceRow,
  type RegistryCopy,
  type RequestChange,
  type ResolvedNamespace,
} from '../namespace-registry';
import { partitionCount, partitionName, partitionOfId, partitionOfName } from '../partitions';
import { plainRows } from '../plain-rows';

/**
 * One partition of the membership, requester and inbox indexes, so that no object on the path of
 * a request, an approval or a denial serves the whole instance. Every group and project belongs
 * to one tree, named by its root (its top-level group, or for a personal project its user's
 * namespace); a tree's rows all live in the partition of the root's id. Everything the inbox reasons about (the managers of a request's
 * chain, a group's requests judged again when its members change) stays within one tree, so it
 * stays one transaction in one object (the functions of namespace-registry.ts and
 * inbox-index.ts).
 *
 * What the indexes show beside their rows is copied in: a group's or project's name, full path
 * and visibility come with each push of its object and with every newer registry version; a
 * requester's names with their request; a user's state from the user fan-out. Each copy is
 * forward-only by the version of the row it copies.
 */

/** How soon the alarm sends again the managers' inbox updates that could not be sent (ms). */
const INBOX_RETRY_MS = 10_000;
/** How many managers' updates are sent at once. */
const INBOX_BATCH = 50;

/** A group or project as its object pushes it: the registry row's copy, and its ancestors. */
export interface SourceCopy {
  id: number;
  kind: 'group' | 'project';
  name: string;
  full_path: string;
  visibility: string;
  /** The registry row's version. */
  version: number;
  /** Nearest first: ancestor groups, then (a personal project) the user's namespace; the root last. */
  ancestorIds: number[];
}

/** A user's names and state as the members lists show them, with the users row's version. */
export type UserNames = Pick<UserRow, 'id' | 'username' | 'name' | 'state' | 'version'>;

/** A requester's names as their request row holds them, with the users row's version. */
export type RequesterCopy = {
  userId: number;
  username: string;
  name: string;
  version: number;
};

/** What a group's or project's object must still correct after its push (`applyChanges`): members whose users were deleted, pending requesters blocked, deactivated or deleted, and requesters' names now. */
export interface IndexReply {
  departed: number[];
  inactive: number[];
  requesters: RequesterCopy[];
}

/**
 * Where the finder learns the tree of a full path: `[top-level path, root id]`, kept by the
 * partition of the path's name (a top-level path's partition is not its tree's, and a rename
 * changes it).
 */
export type TopLocator = [path: string, rootId: number];

/**
 * A group or project by id or full path from the index partitions' copies (see `locate`). By id,
 * one call: an id's partition is its tree's (partitions.ts `idInTreeOf`). By full path, the
 * partition of the top-level path, then, when the tree is elsewhere, the tree's. Null when they
 * do not know it.
 */
export const locateNamespace = async (env: Env, kind: 'group' | 'project', ref: number | string): Promise<ResolvedNamespace | null> => {
  const count = partitionCount(env);
  const first = typeof ref === 'number' ? partitionOfId(ref, count) : partitionOfName(ref.split('/')[0], count);
  const answer = await indexPartition(env, first).locate(kind, ref, null);
  if (answer === null || 'namespace' in answer) return answer;
  const found = await indexPartition(env, partitionOfId(answer.rootId, count)).locate(kind, ref, answer.rootId);
  return found && 'namespace' in found ? found : null;
};

/** A user's highest membership of a group or project and its ancestors, without their names. */
export type EffectiveMembership = {
  user_id: number;
  access_level: number;
  created_at: string;
  created_by: number | null;
  expires_at: string | null;
};

/**
 * The index partition holding the rows of a group's or project's tree: the partition of its root's
 * id (its last ancestor, or itself).
 */
export const treeIndex = (env: Env, id: number, ancestorIds: readonly number[]) => indexPartition(env, partitionOfId(ancestorIds.at(-1) ?? id, partitionCount(env)));

/** One index partition by number. */
export const indexPartition = (env: Env, partition: number) => env.INDEX_PARTITIONS.getByName(partitionName('index', partition));

/** Every index partition (administrators' inbox, a deleted object that never learnt its tree, tests). */
export const allIndexPartitions = (env: Env) => Array.from({ length: partitionCount(env) }, (_, p) => indexPartition(env, p));

/** One index partition's stub. */
export type IndexPartitionStub = ReturnType<typeof indexPartition>;

/**
 * The index partitions holding rows of a user, as their `User` object lists them. A page that
 * reads several views of the user (the dashboard) asks once and hands the answer to each.
 */
export const userIndexPartitions = async (env: Env, userId: number): Promise<IndexPartitionStub[]> =>
  (await userObject(env, userId).indexPartitions()).map((p) => indexPartition(env, p));

export class IndexPartition extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The round of inbox deliveries under way, shared by every caller waiting for it. */
  private delivering: Promise<boolean> | null = null;
  /** Whether this instance has set the alarm for inbox updates waiting to be sent. */
  private armed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, INDEX_PARTITION_SCHEMA);
  }

  // ---- writes: from the namespaces' objects, the Directory's registry outbox and the user fan-out ----

  /**
   * A namespace object's outbox (namespace-registry.ts `applyMembershipChanges`), with its copy of
   * the registry row and its pending requesters' names. The answer says what the object must still
   * correct: members whose users were deleted, requesters no longer active, and requesters' newer
   * names.
   */
  async applyChanges(source: SourceCopy, members: MembershipChange[], requests: RequestChange[], requesters: RequesterCopy[]): Promise<IndexReply> {
    if (!this.applyLocally(source, members, requests, requesters)) return { departed: [], inactive: [], requesters: [] };
    // Registering first: a user change the fan-out did not bring here (this partition was not yet
    // the user's) comes with the registration, and the answer below judges by it.
    await this.registerUsers();
    await this.deliverInbox();
    await this.deliverClaimChecks();
    return this.replyTo(members, requests);
  }

  /** The transaction of `applyChanges`; false when the group or project was deleted. */
  private applyLocally(source: SourceCopy, members: MembershipChange[], requests: RequestChange[], requesters: RequesterCopy[]): boolean {
    return this.commit(() => this.applied(source, members, requests, requesters));
  }

  /** What `applyLocally` changes, inside a transaction. */
  private applied(source: SourceCopy, members: MembershipChange[], requests: RequestChange[], requesters: RequesterCopy[]): boolean {
    if (this.isDeleted(source.id)) return false;
    this.takeSource(source);
    for (const r of requesters) this.takeRequester(r);
    const before = source.kind === 'group' ? levelsBefore(this.sql, source.id, members) : null;
    applyMembershipChanges(this.sql, source.id, members, requests);
    if (before) queueLowered(this.sql, source.id, before);
    // Members, and requesters (a decided request stays in their own view for a while).
    const arrived = [...members.filter((c) => c.accessLevel > 0), ...requests].map((c) => c.userId);
    for (const id of arrived) this.sql.exec('INSERT INTO known_users (user_id, registered) VALUES (?, 0) ON CONFLICT (user_id) DO NOTHING', id);
    return true;
  }

  /**
   * What the pushing object must still correct: members whose users were deleted, requesters no
   * longer active, and requesters' newer names.
   */
  private replyTo(members: MembershipChange[], requests: RequestChange[]): IndexReply {
    return this.ctx.storage.transactionSync(() => {
      const reply: IndexReply = { departed: [], inactive: [], requesters: [] };
      for (const c of members) if (c.accessLevel > 0 && this.userState(c.userId) === 'deleted') reply.departed.push(c.userId);
      for (const r of requests) {
        if (!r.pending) continue;
        const user = this.sql
          .exec<{ username: string; name: string; state: string; version: number }>('SELECT username, name, state, version FROM users WHERE id = ?', r.userId)
          .toArray()[0];
        if (user && user.state !== 'active') reply.inactive.push(r.userId);
        else if (user) reply.requesters.push({ userId: r.userId, username: user.username, name: user.name, version: user.version });
      }
      return reply;
    });
  }

  /**
   * Registry rows of this partition's trees, from the Directory's registry outbox: every column
   * the lists of groups and projects show. Taken when as new as the copy here or newer (a copy
   * pushed by a group's own object carries fewer columns at the same version); a deleted group or
   * project stays deleted. A rename reaches the owners' inbox, as a push's does.
   */
  async applyRegistryRows(rows: RegistryCopy[], tops: TopLocator[] = []): Promise<void> {
    this.commit(() => {
      // A path renamed away keeps its entry: the tree then has no row by it, and the finder asks
      // the Directory. A path taken again points at its new tree.
      for (const [path, root] of tops) {
        this.sql.exec('INSERT INTO registry_tops (path, root_id) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET root_id = excluded.root_id', path, root);
      }
      for (const r of rows) {
        if (this.isDeleted(r.id)) continue;
        const before = this.sql.exec<{ name: string; full_path: string; version: number }>('SELECT name, full_path, version FROM namespaces WHERE id = ?', r.id).toArray()[0];
        if (before && before.version > r.version) continue;
        this.sql.exec(
          `INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, require_two_factor_authentication,
             description, creator_id, created_at, version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, path = excluded.path, full_path = excluded.full_path,
             full_name = excluded.full_name, parent_id = excluded.parent_id, visibility = excluded.visibility,
             request_access_enabled = excluded.request_access_enabled, require_two_factor_authentication = excluded.require_two_factor_authentication,
             description = excluded.description,
             creator_id = excluded.creator_id, created_at = excluded.created_at, version = excluded.version`,
          r.id,
          r.kind,
          r.name,
          r.path,
          r.full_path,
          r.full_name,
          r.parent_id,
          r.visibility,
          r.request_access_enabled ? 1 : 0,
          r.require_two_factor_authentication ? 1 : 0,
          r.description,
          r.creator_id,
          r.created_at,
          r.version,
        );
        this.shownAnew(r.id, before, r);
      }
    });
    await this.deliverInbox();
  }

  /** A group or project was deleted: its rows go, and stay gone whatever push arrives late. */
  async deleteSource(id: number): Promise<void> {
    this.commit(() => {
      this.sql.exec('INSERT INTO deleted_namespaces (id) VALUES (?) ON CONFLICT (id) DO NOTHING', id);
      queueAllMembers(this.sql, id);
      this.sql.exec('DELETE FROM memberships WHERE namespace_id = ?', id);
      requestsDeletedWith(this.sql, id);
      this.sql.exec('DELETE FROM pending_requests WHERE namespace_id = ?', id);
      this.sql.exec('DELETE FROM namespaces WHERE id = ?', id);
    });
    await this.deliverInbox();
    await this.deliverClaimChecks();
  }

  /**
   * The user fan-out: a user's newer names or state (a deleted user is final). Inboxes showing
   * their requests are told. Returns where this partition has the user's pending requests and
   * memberships, for the fan-out to reach.
   */
  async applyUser(snapshot: UserSnapshot): Promise<{ pendingIn: number[]; memberOf: number[] }> {
    const found = this.commit(() => this.takeUser(snapshot));
    await this.deliverInbox();
    return found;
  }

  /** What `applyUser` changes, inside a transaction. */
  private takeUser(snapshot: UserSnapshot): { pendingIn: number[]; memberOf: number[] } {
    const before = this.sql.exec<{ version: number }>('SELECT version FROM users WHERE id = ?', snapshot.id).toArray()[0];
    if (!before || before.version < snapshot.version) {
      const names = 'username' in snapshot ? snapshot : this.sql.exec<{ username: string; name: string }>('SELECT username, name FROM users WHERE id = ?', snapshot.id).toArray()[0];
      this.sql.exec(
        `INSERT INTO users (id, username, name, state, version) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET username = excluded.username, name = excluded.name, state = excluded.state, version = excluded.version`,
        snapshot.id,
        names?.username ?? '',
        names?.name ?? '',
        snapshot.state,
        snapshot.version,
      );
      requesterChanged(this.sql, snapshot.id);
    }
    return {
      pendingIn: pendingRequestsOf(this.sql, snapshot.id).map((n) => n.id),
      memberOf: this.sql.exec<{ id: number }>('SELECT namespace_id AS id FROM memberships WHERE user_id = ? AND access_level > 0', snapshot.id).toArray().map((r) => r.id),
    };
  }

  /**
   * Users who got their first row here are told, in their `User` object, that this partition
   * holds rows of theirs (their inbox and own requests are read from those partitions alone). Done
   * before the change that brought them answers; a failure fails the push, whose retry does it.
   */
  private async registerUsers(): Promise<void> {
    const waiting = this.sql.exec<{ user_id: number }>('SELECT user_id FROM known_users WHERE registered = 0').toArray().map((r) => r.user_id);
    if (waiting.length === 0) return;
    const partition = this.partition();
    const users = await Promise.all(waiting.map((id) => userObject(this.env, id).addIndexPartitions([partition])));
    this.commit(() => {
      // The user as their `User` knows them: a change fanned out before this partition was
      // theirs reached only the partitions listed then (forward-only, so an older one is a no-op).
      for (const user of users) if (user) this.takeUser(user);
      this.sql.exec('UPDATE known_users SET registered = 1 WHERE user_id IN (SELECT value FROM json_each(?))', JSON.stringify(waiting));
    });
  }

  // ---- the managers' inboxes: a durable outbox to their `User` objects ----

  /**
   * Runs one write transaction (never inside another), and sets the alarm for the managers' updates
   * it queued in the inbox outbox (inbox-index.ts `bump`) with no await between: Durable Object
   * writes without an await between them are committed together, so a crash before the updates are
   * sent leaves the alarm to send them.
   */
  private commit<T>(change: () => T): T {
    const result = this.ctx.storage.transactionSync(change);
    this.arm();
    return result;
  }

  /** Sets the alarm while managers' updates wait to be sent. */
  private arm(): void {
    if (this.armed || !(inboxOutboxWaiting(this.sql) || claimChecksWaiting(this.sql))) return;
    void this.ctx.storage.setAlarm(clock.now() + INBOX_RETRY_MS);
    this.armed = true;
  }

  /**
   * Sends each queued manager's update of this partition to their `User` (inbox-index.ts: the rows
   * changed since the version it took, or the whole share when it asked for it), before the change
   * that queued it answers; what cannot be sent stays queued for the alarm. One round at a time,
   * shared by every caller, so a manager's updates from here go one after another; a caller whose
   * change came after the round read the queue waits for the next.
   */
  private async deliverInbox(): Promise<void> {
    while (inboxOutboxWaiting(this.sql)) {
      this.delivering ??= this.deliverRound().finally(() => {
        this.delivering = null;
      });
      if (!(await this.delivering)) {
        this.arm();
        return;
      }
    }
    // Nothing waits: the alarm has nothing to do.
    if (this.armed && !claimChecksWaiting(this.sql)) {
      void this.ctx.storage.deleteAlarm();
      this.armed = false;
    }
  }

  /**
   * One round: up to INBOX_BATCH updates, sent at once; true when every `User` answered (one that
   * asked for its whole share stays queued for the next round, which sends it).
   */
  private async deliverRound(): Promise<boolean> {
    const partition = this.partition();
    const updates = this.ctx.storage.transactionSync(() => inboxDeliveries(this.sql, INBOX_BATCH));
    const sent = await Promise.allSettled(updates.map((u) => userObject(this.env, u.managerId).takeInbox(partition, u.update)));
    this.ctx.storage.transactionSync(() => {
      sent.forEach((r, i) => {
        if (r.status === 'rejected') return;
        if (r.value === 'resync') inboxResync(this.sql, updates[i].managerId);
        else inboxDelivered(this.sql, updates[i].managerId, updates[i].update.version);
      });
    });
    const failed = sent.filter((r) => r.status === 'rejected');
    if (failed.length > 0) console.warn("managers' inbox updates could not be sent; the alarm will retry", this.ctx.id.name, failed.length);
    return failed.length === 0;
  }

  /** Sends what a crash or a failure left queued; rings again while something cannot be sent. */
  async alarm(): Promise<void> {
    this.armed = false;
    await this.deliverInbox();
    await this.deliverClaimChecks();
  }

  /** Tells users their group claims may have shrunk (claim-checks.ts); what fails waits for the alarm. */
  private async deliverClaimChecks(): Promise<void> {
    while (claimChecksWaiting(this.sql)) {
      if (!(await sendClaimChecks(this.env, this.sql))) {
        this.arm();
        return;
      }
    }
  }

  /** This partition's number, from its name (`index:<p>`). */
  private partition(): number {
    const p = Number(this.ctx.id.name?.split(':')[1]);
    if (!Number.isInteger(p)) throw new Error(`an index partition is named index:<number>, not ${this.ctx.id.name}`);
    return p;
  }

  // ---- reads ----

  /**
   * A group or project by id or full path (case-insensitive), from the copies: the finder's first
   * try after its isolate's cache, before the Directory. By id, asked of the id's partition, which
   * is its tree's. By full path, asked first of the partition of the top-level path, which knows
   * the tree (`{ rootId }`: ask the tree's partition, with it), or answers itself when the tree is
   * its own. Null when it does not know: the finder then asks the Directory, so a copy that is
   * missing or behind never makes a group or project unfindable. Only rows the registry pushed
   * whole (not a group's own push alone) are answered.
   */
  locate(kind: 'group' | 'project', ref: number | string, rootId: number | null): ResolvedNamespace | { rootId: number } | null {
    const root = typeof ref === 'number' ? null : (rootId ?? this.sql.exec<{ root_id: number }>('SELECT root_id FROM registry_tops WHERE path = ?', ref.split('/')[0]).toArray()[0]?.root_id);
    if (root === undefined) return null;
    if (root !== null && partitionOfId(root, partitionCount(this.env)) !== this.partition()) return rootId === null ? { rootId: root } : null;
    const found = resolveNamespace(this.sql, kind, ref);
    if (!found || found.namespace.version === 0 || found.namespace.created_at === '') return null;
    // The chain of parents must reach a top-level row of this partition (the path's tree, when
    // found by path): a copy missing a link answers nothing.
    const top = found.ancestorIds.at(-1) ?? found.namespace.id;
    if (root !== null && top !== root) return null;
    const topLevel = this.sql.exec('SELECT 1 FROM namespaces WHERE id = ? AND parent_id IS NULL', top).toArray().length > 0;
    return topLevel && partitionOfId(top, partitionCount(this.env)) === this.partition() ? found : null;
  }

  /** The administrators' inbox here: every pending request (inbox-index.ts); only the version while it is `known`. */
  everyRequest(filter: InboxFilter, limit: number, known: KnownVersion): { version: number; page: InboxPage | null } {
    return this.ctx.storage.transactionSync(() => everyRequest(this.sql, filter, limit, known));
  }

  /** A manager's alerts here: break-glass grants where they are an Owner, others' access that ends soon (alerts.ts). */
  accessAlerts(userId: number): AccessAlertRow[] {
    return alertsOf(this.sql, userId, isoNow());
  }

  /** A requester's own requests here that they may see, oldest first. */
  ownRequests(userId: number, admin: boolean): OwnRequestRow[] {
    return visibleOwnRequests(this.sql, userId, admin, clock.now());
  }

  /**
   * The names and states this partition keeps of users with rows here (the members lists show
   * them): only of users whose `User` lists this partition, so that every later change of
   * theirs reaches the copy. A deleted user is left out, as the Directory leaves them out.
   */
  usersNamed(ids: number[]): UserNames[] {
    return this.sql
      .exec<UserNames>(
        `SELECT u.id, u.username, u.name, u.state, u.version FROM users u JOIN known_users k ON k.user_id = u.id AND k.registered = 1
         WHERE u.id IN (SELECT value FROM json_each(?)) AND u.state != 'deleted' AND u.username != ''`,
        JSON.stringify(ids),
      )
      .toArray();
  }

  /**
   * Users as the Directory answered them for a members list, kept for the next one: only those
   * with rows here whose `User` lists this partition (the fan-out keeps them current), newer
   * versions only.
   */
  takeUsers(users: UserNames[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const u of users) {
        this.sql.exec(
          `INSERT INTO users (id, username, name, state, version)
           SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM known_users WHERE user_id = ? AND registered = 1)
           ON CONFLICT (id) DO UPDATE SET username = excluded.username, name = excluded.name, state = excluded.state, version = excluded.version
           WHERE excluded.version > users.version`,
          u.id,
          u.username,
          u.name,
          u.state,
          u.version,
          u.id,
        );
      }
    });
  }

  /** Where a user has pending access requests here. */
  pendingRequestsOf(userId: number) {
    return pendingRequestsOf(this.sql, userId);
  }

  /** The user's memberships here, as `[namespace id, level]` (the lists of groups and projects they reach). */
  levelsOf(userId: number): [number, number][] {
    return this.sql
      .exec<{ namespace_id: number; access_level: number }>('SELECT namespace_id, access_level FROM memberships WHERE user_id = ? AND access_level > 0', userId)
      .toArray()
      .map((r) => [r.namespace_id, r.access_level]);
  }

  /** The user's groups here for OpenID Connect's group claims (group-memberships.ts). */
  groupMemberships(userId: number): GroupMemberships {
    return groupMembershipsOf(this.sql, userId, todayUtc());
  }

  /** The group here that requires the user to have a second factor, if any (group-memberships.ts). */
  twoFactorRequiredBy(userId: number): string | null {
    return twoFactorRequiredBy(this.sql, userId, todayUtc());
  }

  /**
   * The first `limit` groups or projects by id that the user reaches here (their memberships and
   * everything below them, all in the same trees), with the list's total here; the caller merges
   * the user's partitions.
   */
  listReached(kind: 'group' | 'project', filter: ListFilter, limit: number): { total: number; namespaces: (NamespaceRow & { access_level: number | null })[] } {
    const levels = this.levelsOf(filter.userId);
    if (levels.length === 0) return { total: 0, namespaces: [] };
    return listNamespaces(this.sql, kind, filter, levels, 0, limit);
  }

  /**
   * Members of a group or project and of its ancestors (all in this tree), each user once at their
   * highest level, by user id; their names are the Directory's to add.
   */
  effectiveMembers(namespaceIds: number[], offset: number, limit: number, onlyUserId?: number): { total: number; members: EffectiveMembership[] } {
    const scope = `namespace_id IN (SELECT value FROM json_each(?)) AND access_level > 0 AND (? IS NULL OR user_id = ?)`;
    const args = [JSON.stringify(namespaceIds), onlyUserId ?? null, onlyUserId ?? null];
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(DISTINCT user_id) AS n FROM memberships WHERE ${scope}`, ...args).one().n;
    // SQLite takes the bare columns of an aggregate query from the row holding the MAX.
    const members = this.sql
      .exec<EffectiveMembership>(
        `SELECT user_id, MAX(access_level) AS access_level, created_at, created_by, expires_at FROM memberships
         WHERE ${scope} GROUP BY user_id ORDER BY user_id LIMIT ? OFFSET ?`,
        ...args,
        limit,
        offset,
      )
      .toArray();
    return { total, members };
  }

  /** Groups here of which the user is the only direct Owner (GitLab's `solo_owned_groups`). */
  soleOwnedGroups(userId: number): number[] {
    return soleOwnedGroupsOf(this.sql, userId);
  }

  /** The index's view of one user in one group or project (tests of convergence). */
  membershipOf(namespaceId: number, userId: number): { access_level: number; version: number } | null {
    return (
      this.sql
        .exec<{ access_level: number; version: number }>('SELECT access_level, version FROM memberships WHERE namespace_id = ? AND user_id = ?', namespaceId, userId)
        .toArray()[0] ?? null
    );
  }

  // ---- helpers ----

  private isDeleted(id: number): boolean {
    return this.sql.exec('SELECT 1 FROM deleted_namespaces WHERE id = ?', id).toArray().length > 0;
  }

  private userState(id: number): string | null {
    return this.sql.exec<{ state: string }>('SELECT state FROM users WHERE id = ?', id).toArray()[0]?.state ?? null;
  }

  /** Takes a newer copy of the source's registry row; its ancestors are placeholders until their own copies come. */
  private takeSource(source: SourceCopy): void {
    // Ancestors are groups, but for a personal project's user namespace, which holds no members.
    const chain = [{ id: source.id, kind: source.kind as string }, ...source.ancestorIds.map((id) => ({ id, kind: 'group' }))];
    chain.forEach((n, i) => {
      this.sql.exec(
        `INSERT INTO namespaces (id, kind, name, full_path, parent_id, visibility, version) VALUES (?, ?, '', '', ?, 'private', 0)
         ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id`,
        n.id,
        n.kind,
        chain[i + 1]?.id ?? null,
      );
    });
    const before = this.sql.exec<{ name: string; full_path: string; version: number }>('SELECT name, full_path, version FROM namespaces WHERE id = ?', source.id).one();
    if (before.version >= source.version) return;
    this.sql.exec('UPDATE namespaces SET name = ?, path = ?, full_path = ?, visibility = ?, version = ? WHERE id = ?', source.name, source.full_path.split('/').at(-1) ?? '', source.full_path, source.visibility, source.version, source.id);
    this.shownAnew(source.id, before, source);
  }

  /** A group or project the inbox already showed (not a placeholder) by another name or path: the inbox follows. */
  private shownAnew(id: number, before: { name: string; full_path: string; version: number } | undefined, now: { name: string; full_path: string }): void {
    if (before && before.version > 0 && (before.name !== now.name || before.full_path !== now.full_path)) sourcesRenamed(this.sql, [id]);
  }

  /** A requester's names from their request row, when newer than the copy (a state is the fan-out's to change). */
  private takeRequester(r: RequesterCopy): void {
    this.sql.exec(
      `INSERT INTO users (id, username, name, state, version) VALUES (?, ?, ?, 'active', ?)
       ON CONFLICT (id) DO UPDATE SET username = excluded.username, name = excluded.name, version = excluded.version
       WHERE excluded.version > users.version`,
      r.userId,
      r.username,
      r.name,
      r.version,
    );
  }
}
