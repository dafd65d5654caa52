import { DurableObject } from 'cloudflare:workers';
import type { NamespaceKind } from '../../../shared/access-levels';
import type { Visibility } from '../../../shared/api-types';
import { isoNow } from '../../clock';
import type { Env } from '../../env';
import { eventId, newEvent, type EventDraft, type EventEntity, type EventRecord, type NewEvent, type UserRef } from '../../events/event';
import { directory } from '../directory/directory';
import type { RequesterCopy } from '../index-partition/index-partition';
import { EventLog, type UserLookup } from '../event-log';
import { migrate } from '../migrations';
import { snapshotOf, type NamespaceSnapshot } from '../namespace-registry';
import { NAMESPACE_SCHEMA } from './schema';
import type { AccessRequestRow, Actor, MemberRow, NamespaceRef, PageOf, RuleApproval, Stale } from './types';
import { Webhooks } from './webhooks';
import { plainRows } from '../plain-rows';

/**
 * The base of a group's or project's Durable Object (namespace.ts): its state, its copy of the
 * registry row, the rows of its tables, and the events it records. The layers above add, in
 * turn, its background work (replication.ts), the checks before each rule (checks.ts), the
 * access request and member rules (access.ts), audit events and webhooks (hooks.ts), and the
 * calls of other objects (namespace.ts).
 */

export const STALE: Stale = { ok: false, stale: true };

const ASK_COLUMNS = `r.user_id, r.requested_at, r.username, r.name, r.reason, r.access_level, r.expires_at, r.approvals_required,
  r.max_duration_hours, r.pending_until`;
/** A request's columns, read from `access_requests r`, with its approvals so far as JSON (oldest first). */
export const REQUEST_COLUMNS = `${ASK_COLUMNS},
  (SELECT json_group_array(json(j)) FROM (SELECT json_object('id', a.approver_id, 'username', a.username, 'name', a.name, 'approved_at', a.approved_at) AS j
     FROM approvals a WHERE a.user_id = r.user_id ORDER BY a.approved_at, a.approver_id)) AS approvals`;
/**
 * The same columns while no request here has an approval counted (approvals are counted only under
 * rules that ask for two or more, so nearly always): no subquery per row.
 */
const REQUEST_COLUMNS_NONE_APPROVED = `${ASK_COLUMNS}, '[]' AS approvals`;

/** A page of pending requests, oldest first: `REQUEST_COLUMNS`, or the same without approvals to read. */
const requestPageOf = (columns: string) => `SELECT ${columns} FROM access_requests r ORDER BY r.seq LIMIT ? OFFSET ?`;
const REQUEST_PAGE = { approved: requestPageOf(REQUEST_COLUMNS), noneApproved: requestPageOf(REQUEST_COLUMNS_NONE_APPROVED) };
/** How many pages of requests an object keeps (each page size and offset read is one). */
const KEPT_PAGES = 8;
export const MEMBER_COLUMNS = 'user_id, access_level, created_at, created_by, expires_at';

/** The object's own copy of its registry row (see `NamespaceRef.snapshot`). */
export interface Settings {
  visibility: Visibility;
  requestAccessEnabled: boolean;
  fullPath: string;
  name: string;
  version: number;
  deleted: boolean;
}

/** How a pending request ends, written on its row just before it is deleted (see schema.ts). */
type Closing =
  | { outcome: 'approved'; by: number | null; level: number; expiresAt: string | null; rule?: RuleApproval }
  | { outcome: 'denied'; by: number; reason: string | null }
  | { outcome: 'withdrawn'; by: number }
  | { outcome: 'removed' | 'lapsed' };

/** The caller as an event's author. */
export const actorRef = (actor: Actor): UserRef => ({ id: actor.userId, username: actor.username ?? null, name: actor.name ?? null });
/** The requester, with the names their request carries. */
export const requesterRef = (r: Pick<AccessRequestRow, 'user_id' | 'username' | 'name'>): UserRef => ({ id: r.user_id, username: r.username, name: r.name });
/** A user whose names the object does not have; they are looked up when the event is read or sent. */
export const unnamed = (id: number): UserRef => ({ id, username: null, name: null });
/** A membership's fields of an event. */
export const membership = (m: MemberRow) => ({ access_level: m.access_level, expires_at: m.expires_at, since: m.created_at });

export abstract class NamespaceCore extends DurableObject<Env> {
  protected readonly sql: SqlStorage;

  protected namespaceId: number | null = null;

  protected kind: NamespaceKind = 'group';

  protected settings: Settings | null = null;
  /** Pages of requests last read, by page size and offset, with the `meta.page_version` they were read at. */
  private readonly pages = new Map<string, { version: number; page: PageOf<AccessRequestRow> }>();

  /** Its audit events, with those of everything below it (see event-log.ts). */
  protected readonly log: EventLog;

  protected readonly hooks: Webhooks;

  /** When the oldest event still to be copied up happened; null when none is, undefined until read. */
  protected forwardSince: string | null | undefined = undefined;

  protected readonly lookup: UserLookup = (ids) => directory(this.env).getUsers(ids);

  /** The registry's row of this group or project as it is now, or null when it was deleted. */
  protected async registryRow(ref: NamespaceRef): Promise<NamespaceSnapshot | null> {
    const row = await directory(this.env).getNamespace(ref.kind, ref.id);
    return row === null ? null : snapshotOf(row);
  }

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, NAMESPACE_SCHEMA);
    this.log = new EventLog(this.sql);
    this.hooks = new Webhooks(ctx.storage, env, () => this.namespaceId ?? 0);
  }

  /** Whether this object has state yet; records which namespace it is. */
  protected load(): boolean {
    if (this.namespaceId !== null) return true;
    const meta = this.sql.exec<{ namespace_id: number; kind: NamespaceKind }>('SELECT namespace_id, kind FROM meta').toArray()[0];
    if (!meta) return false;
    this.namespaceId = meta.namespace_id;
    this.kind = meta.kind;
    return true;
  }

  /** The object's copy of its registry row, replaced by `snapshot` when that is newer. */
  protected takeSnapshot(snapshot: NamespaceSnapshot): Settings {
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

  protected readSettings(): Settings {
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

  /** This group or project as its events describe it. */
  protected entity(): EventEntity {
    const s = (this.settings ??= this.readSettings());
    return { id: this.namespaceId ?? 0, kind: this.kind, full_path: s.fullPath, name: s.name, visibility: s.visibility };
  }

  /** Records an event of this group or project in the running transaction, and queues its deliveries. */
  protected record(input: NewEvent, entity: EventEntity = this.entity()): void {
    this.append(newEvent(entity, input));
  }

  /**
   * Appends an event of this object's own, to be copied up, and queues its deliveries. It gets its
   * audit id here, once (`eventId`: this group's or project's id and the event's number here).
   */
  protected append(draft: EventDraft): void {
    const n = this.sql.exec<{ n: number }>('UPDATE meta SET events_numbered = events_numbered + 1 RETURNING events_numbered AS n').one().n;
    const e: EventRecord = { ...draft, id: eventId(this.namespaceId ?? draft.entity.id, n) };
    const seq = this.log.append(e, true);
    if (seq === null) return;
    if (this.forwardSince === null) this.forwardSince = e.created_at;
    this.hooks.enqueue(seq, e);
  }

  protected member(userId: number): MemberRow | null {
    return this.sql.exec<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members WHERE user_id = ?`, userId).toArray()[0] ?? null;
  }

  protected directLevel(userId: number): number {
    return this.member(userId)?.access_level ?? 0;
  }

  protected pendingRequest(userId: number): AccessRequestRow | null {
    return (
      this.sql.exec<AccessRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM access_requests r WHERE r.user_id = ?`, userId).toArray()[0] ?? null
    );
  }

  /**
   * Deletes a user's pending request, first writing on its row how it ended, so the delete
   * trigger's outbox row carries the outcome (same transaction). Returns whether there was one.
   */
  protected closeRequest(userId: number, closing: Closing): boolean {
    const granted = closing.outcome === 'approved' ? closing : null;
    this.sql.exec(
      'UPDATE access_requests SET outcome = ?, granted_level = ?, granted_expires_at = ?, decided_by = ?, decided_at = ?, decided_reason = ?, approved_by_rule = ? WHERE user_id = ?',
      closing.outcome,
      granted?.level ?? null,
      granted?.expiresAt ?? null,
      'by' in closing ? closing.by : null,
      isoNow(),
      closing.outcome === 'denied' ? closing.reason : null,
      granted?.rule ?? null,
      userId,
    );
    return this.sql.exec('DELETE FROM access_requests WHERE user_id = ? RETURNING user_id', userId).toArray().length > 0;
  }

  /**
   * A page of pending requests, oldest first, and how many there are (the list's unfiltered page:
   * its hot path). The pages last read are kept with the `page_version` they were read at, which
   * the schema's triggers change with every write to a request or an approval: a page read again
   * while it is the same costs the one row of `meta` (most reads of a list change nothing).
   */
  protected requestPage(limit: number, offset: number): PageOf<AccessRequestRow> {
    const { total, approved, version } = this.sql
      .exec<{ total: number; approved: number; version: number }>(
        'SELECT requests AS total, EXISTS (SELECT 1 FROM approvals) AS approved, page_version AS version FROM meta',
      )
      .one();
    const key = `${limit}:${offset}`;
    const kept = this.pages.get(key);
    if (kept?.version === version) return kept.page;
    const page = { total, items: this.sql.exec<AccessRequestRow>(approved ? REQUEST_PAGE.approved : REQUEST_PAGE.noneApproved, limit, offset).toArray() };
    if (this.pages.size >= KEPT_PAGES) this.pages.clear();
    this.pages.set(key, { version, page });
    return page;
  }

  protected counts(): { members: number; requests: number } {
    return this.sql.exec<{ members: number; requests: number }>('SELECT members, requests FROM meta').one();
  }

  protected outboxSize(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM outbox').one().n;
  }

  /** Removes these users' memberships and these users' pending requests (the triggers queue both). */
  protected forget(members: number[], requesters: number[]): void {
    if (members.length > 0) this.sql.exec('DELETE FROM members WHERE user_id IN (SELECT value FROM json_each(?))', JSON.stringify(members));
    if (requesters.length > 0) this.sql.exec('DELETE FROM access_requests WHERE user_id IN (SELECT value FROM json_each(?))', JSON.stringify(requesters));
  }

  /** Stores requesters' newer names; names from an older users row never replace newer ones. */
  protected rename(requesters: RequesterCopy[]): void {
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
}
