import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../../env';
import { namespaceOfEvent, type EventRecord } from '../../events/event';
import { directory } from '../directory/directory';
import { EventLog, type AuditFilter, type LoggedEvent } from '../event-log';
import { migrate } from '../migrations';
import { fnv1a } from '../partitions';
import { AUDIT_LOG_SCHEMA } from './schema';
import { plainRows } from '../plain-rows';

/**
 * One part of the instance-wide audit log (GitLab's instance audit events, `GET /audit_events`):
 * a copy of the events of the groups and projects whose id falls in it, sent by their objects'
 * alarms exactly as they send them to their ancestor groups; copies are idempotent by event uuid.
 * `listInstanceEvents` merges the parts for a read.
 */
export class AuditLog extends DurableObject<Env> {
  private readonly log: EventLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, AUDIT_LOG_SCHEMA);
    this.log = new EventLog(plainRows(ctx.storage.sql));
  }

  receiveEvents(records: EventRecord[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const r of records) this.log.append(r, false);
    });
  }

  /** The first `limit` events of this part that `filter` keeps, newest first, and how many it keeps. */
  async listEvents(filter: AuditFilter, limit: number): Promise<{ total: number; items: LoggedEvent[] }> {
    const page = this.log.list(filter, 0, limit);
    return { total: page.total, items: await this.log.withNames(page.items, (ids) => directory(this.env).getUsers(ids)) };
  }

  async getEvent(id: number): Promise<LoggedEvent | null> {
    const found = this.log.find(id);
    if (!found) return null;
    const [named] = await this.log.withNames([found], (ids) => directory(this.env).getUsers(ids));
    return named ?? found;
  }
}

/**
 * How many parts the instance log has. Each group's or project's events go to the part of its id,
 * so no one object takes every event of a large instance. Fixed once a deployment has run: an
 * event is looked up by id in the part of its group's or project's id, which another number
 * would move.
 */
const AUDIT_LOG_PARTS = 16;

/**
 * The part of group or project `namespaceId`: a hash of the id, not the id modulo the parts, since
 * the ids of one tree all fall in its root's index partition (partitions.ts `idInTreeOf`), and so
 * in one residue of any count dividing theirs: one large organisation would get a single part.
 */
export const auditLogPartOf = (namespaceId: number): number => fnv1a(String(namespaceId)) % AUDIT_LOG_PARTS;

/** Part p of the instance log, named `instance:<p>`. */
const part = (env: Env, p: number) => env.AUDIT_LOG.getByName(`instance:${p}`);

/** The part of the instance log that keeps the events of group or project `namespaceId`. */
export const auditLog = (env: Env, namespaceId: number) => part(env, auditLogPartOf(namespaceId));

/** One event of the instance log by its id, asked of the one part that keeps it (the id names its group or project), or null. */
export const getInstanceEvent = (env: Env, id: number): Promise<LoggedEvent | null> => auditLog(env, namespaceOfEvent(id)).getEvent(id);

/**
 * A page of the instance log, newest first: the first `offset + limit` events of each part that
 * match, merged by time, then id, the order each part lists in (ids are unique across the
 * instance, so the order is total and a page is the same however the parts split the events).
 * Costs one call per part, and grows with the page's depth, not with the number of events; for
 * administrators only.
 */
export const listInstanceEvents = async (env: Env, filter: AuditFilter, offset: number, limit: number): Promise<{ total: number; items: LoggedEvent[] }> => {
  const pages = await Promise.all(Array.from({ length: AUDIT_LOG_PARTS }, (_, p) => part(env, p).listEvents(filter, offset + limit)));
  const items = pages
    .flatMap((page) => page.items)
    .sort((a, b) => (a.record.created_at === b.record.created_at ? b.record.id - a.record.id : a.record.created_at < b.record.created_at ? 1 : -1));
  return { total: pages.reduce((n, page) => n + page.total, 0), items: items.slice(offset, offset + limit) };
};
