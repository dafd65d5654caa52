import { clock, isoNow } from '../../clock';
import { endMs, warnAtSql } from '../../dates';
import { auditLog } from '../audit-log/audit-log';
import { directory } from '../directory/directory';
import { allIndexPartitions, treeIndex, type IndexReply, type RequesterCopy, type SourceCopy } from '../index-partition/index-partition';
import type { MembershipChange, RequestChange, RequestOutcome } from '../namespace-registry';
import { ok, type Result } from '../result';
import { MEMBER_COLUMNS, membership, NamespaceCore, REQUEST_COLUMNS, requesterRef, unnamed } from './core';
import { namespaceObject, type AccessRequestRow, type MemberRow } from './types';

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
  details: string | null;
};

const WARN_AT = warnAtSql('m.expires_at');
const UNWARNED = `members m LEFT JOIN expiry_warnings w ON w.user_id = m.user_id AND w.expires_at = m.expires_at
  WHERE m.expires_at IS NOT NULL AND w.user_id IS NULL`;

/**
 * A group's or project's background work, all on its one alarm: membership changes pushed from
 * the outbox to its tree's index partition, its events copied up to the ancestor groups and the
 * instance log, members removed when their expiry date comes, and webhook deliveries
 * (webhooks.ts). A rule's transaction (`mutate`) sets the alarm with the change.
 */
export abstract class NamespaceReplication extends NamespaceCore {
  /**
   * When the object next has time-driven work (epoch ms): a member's end, or the warning before
   * it, or a pending request's expiry; null when none, undefined until read.
   */
  protected nextExpiry: number | null | undefined = undefined;

  /** Copying events up failed: not again before this time (epoch ms). */
  private forwardRetryAt = 0;

  /** Its ancestors, nearest first (the tree's root last); null until known. */
  protected treeIds: number[] | null = null;

  /**
   * Runs a read-then-write rule in one transaction. The triggers have written an outbox row for
   * any member change; the alarm is set before anything awaits, so it is stored with the change
   * itself (Durable Object writes without an intervening await are committed together).
   */
  protected mutate<T>(rule: () => Result<T>): Result<T> {
    const result = this.ctx.storage.transactionSync(rule);
    if (result.ok) this.nextExpiry = undefined;
    this.scheduleAlarm();
    return result;
  }

  /**
   * One alarm for the earliest due time of all the object's background work: an outbox retry,
   * the next membership expiry, events to copy up, and webhook deliveries (docs/architecture.md).
   */
  protected scheduleAlarm(): void {
    const now = clock.now();
    const retry = this.outboxSize() > 0 || this.sourceUnpushed() ? now + PUSH_RETRY_MS : Infinity;
    const expiry = this.earliestExpiry();
    const forward = this.forwardDue() ?? Infinity;
    const delivery = (this.hooks.nextDue() ?? Infinity) + BACKGROUND_BATCH_MS;
    // An alarm cannot be set past the year 2189 (workerd refuses it): a later expiry wakes the
    // object a year from now instead, and that alarm sets the next one.
    const expiryDue = expiry === null ? Infinity : Math.min(expiry, now + EXPIRY_HORIZON_MS);
    const due = Math.min(retry, expiryDue, forward, delivery);
    if (due === Infinity) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(due);
  }

  protected earliestExpiry(): number | null {
    if (this.nextExpiry === undefined) {
      const due = this.sql
        .exec<{ end: string | null; warn: string | null; lapse: string | null }>(
          `SELECT (SELECT MIN(expires_at) FROM members WHERE expires_at IS NOT NULL) AS end,
                  (SELECT MIN(${WARN_AT}) FROM ${UNWARNED}) AS warn,
                  (SELECT MIN(pending_until) FROM access_requests WHERE pending_until IS NOT NULL) AS lapse`,
        )
        .one();
      const times = [due.end === null ? Infinity : endMs(due.end), due.warn === null ? Infinity : Date.parse(due.warn), due.lapse === null ? Infinity : Date.parse(due.lapse)];
      const first = Math.min(...times);
      this.nextExpiry = first === Infinity ? null : first;
    }
    return this.nextExpiry;
  }

  /**
   * The object's time-driven rules, in one transaction: members whose end has come are removed
   * (a date at 00:00 UTC, a date-time at its minute; the triggers queue the removals for the
   * membership index); members whose end is near are warned once per end (`expiring`); pending
   * requests whose rules gave them a deadline lapse (`request_expired`). Run by the alarm, and
   * before any rule is judged, so a late alarm never leaves an expired member in.
   */
  protected expireDue(): void {
    const expiry = this.earliestExpiry();
    if (expiry === null || expiry > clock.now()) return;
    this.mutate(() => {
      const now = isoNow();
      const expired = this.sql.exec<MemberRow>(`DELETE FROM members WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING ${MEMBER_COLUMNS}`, now);
      for (const member of expired) this.record({ action: 'expired', author: null, user: unnamed(member.user_id), ...membership(member) });
      const warned = this.sql.exec<MemberRow>(`SELECT ${MEMBER_COLUMNS.split(', ').map((c) => `m.${c}`).join(', ')} FROM ${UNWARNED} AND ${WARN_AT} <= ?`, now).toArray();
      for (const member of warned) {
        this.sql.exec('INSERT INTO expiry_warnings (user_id, expires_at) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET expires_at = excluded.expires_at', member.user_id, member.expires_at);
        this.record({ action: 'expiring', author: null, user: unnamed(member.user_id), ...membership(member) });
      }
      const lapsed = this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests r WHERE r.pending_until IS NOT NULL AND r.pending_until <= ?`, now).toArray();
      for (const request of lapsed) {
        this.closeRequest(request.user_id, { outcome: 'lapsed' });
        this.record({ action: 'request_expired', author: null, user: requesterRef(request), since: request.requested_at, reason: request.reason, access_level: request.access_level, expires_at: request.expires_at });
      }
      return ok(null);
    });
  }

  /**
   * Pushes the outbox to the index partition of this group's or project's tree, oldest first, with
   * the object's copy of its registry row and its pending requesters' names; what was delivered is
   * deleted. A newer registry copy alone (a rename) is pushed too.
   */
  protected async push(): Promise<void> {
    const namespaceId = this.namespaceId;
    if (namespaceId === null) return;
    for (;;) {
      const rows = this.sql
        .exec<OutboxRow>(
          `SELECT version, entry, user_id, access_level, created_at, created_by, expires_at, outcome, granted_level, decided_at, details
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
          details: r.details,
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

  protected rememberTree(ids: number[]): void {
    this.treeIds = ids;
    this.sql.exec('UPDATE meta SET tree_ids = ? WHERE tree_ids IS NULL', JSON.stringify(ids));
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
  protected async ancestorGroups(): Promise<number[]> {
    const stored = this.sql.exec<{ ancestor_ids: string | null }>('SELECT ancestor_ids FROM meta').one().ancestor_ids;
    if (stored !== null) return JSON.parse(stored) as number[];
    const found = await directory(this.env).resolveNamespace(this.kind, this.namespaceId ?? 0);
    const ids = !found || found.namespace.parent?.kind !== 'group' ? [] : found.ancestorIds;
    this.sql.exec('UPDATE meta SET ancestor_ids = ?', JSON.stringify(ids));
    return ids;
  }

  /**
   * The index partition drops this deleted group's or project's rows; the alarm retries until it
   * has. An object that never learnt its tree (no push of it ever reached its partition) tells
   * every partition: the registry row is gone, so there is no asking where it was.
   */
  protected async pushDeletion(): Promise<boolean> {
    const id = this.namespaceId ?? 0;
    const tree = this.knownTree();
    try {
      await Promise.all((tree ? [treeIndex(this.env, id, tree)] : allIndexPartitions(this.env)).map((p) => p.deleteSource(id)));
      this.sql.exec('UPDATE meta SET index_deleted = 1');
      return true;
    } catch (e) {
      console.warn('the index partition could not drop a deleted namespace; the alarm will retry', this.namespaceId, e);
      void this.ctx.storage.setAlarm(clock.now() + PUSH_RETRY_MS);
      return false;
    }
  }

  /**
   * A deleted group's or project's alarm: its index partition drops its rows, and the events it
   * recorded before the deletion are still copied up (its group's and the instance's logs keep
   * them); it rings again while either is left.
   */
  private async afterDeletion(): Promise<void> {
    const dropped = this.sql.exec<{ d: number }>('SELECT index_deleted AS d FROM meta').one().d === 1 || (await this.pushDeletion());
    await this.forward();
    const now = clock.now();
    const due = Math.min(dropped ? Infinity : now + PUSH_RETRY_MS, this.forwardDue() ?? Infinity);
    if (due !== Infinity) await this.ctx.storage.setAlarm(due);
  }

  /** When events waiting to be copied up are due to go (epoch ms); null when none wait. */
  protected forwardDue(): number | null {
    this.forwardSince ??= this.log.oldestPendingForward();
    const pending = this.forwardSince;
    return pending === null ? null : Math.max(Date.parse(pending) + BACKGROUND_BATCH_MS, this.forwardRetryAt);
  }

  /**
   * The object's one alarm: removes members whose expiry date has started, and retries membership
   * changes that could not be pushed when they happened. It is set for the earliest of the two.
   */
  async alarm(): Promise<void> {
    if (!this.load()) return;
    if (this.readSettings().deleted) return this.afterDeletion();
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
}
