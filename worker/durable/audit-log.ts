import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import type { EventRecord } from '../events/event';
import { directory } from './directory';
import { EventLog, type AuditFilter, type LoggedEvent } from './event-log';
import { auditLogMigrations } from './event-log-schema';
import { migrate } from './migrations';

/**
 * The instance-wide audit log (GitLab's instance audit events, `GET /audit_events`): a copy of
 * every group's and project's events, sent by their objects' alarms exactly as they send them
 * to their ancestor groups. One instance, named "instance"; copies are idempotent by event uuid.
 */
export class AuditLog extends DurableObject<Env> {
  private readonly log: EventLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, auditLogMigrations);
    this.log = new EventLog(ctx.storage.sql);
  }

  receiveEvents(records: EventRecord[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const r of records) this.log.append(r, false);
    });
  }

  async listEvents(filter: AuditFilter, offset: number, limit: number): Promise<{ total: number; items: LoggedEvent[] }> {
    const page = this.log.list(filter, offset, limit);
    return { total: page.total, items: await this.log.withNames(page.items, (ids) => directory(this.env).getUsers(ids)) };
  }

  async getEvent(seq: number): Promise<LoggedEvent | null> {
    const found = this.log.find(seq);
    if (!found) return null;
    const [named] = await this.log.withNames([found], (ids) => directory(this.env).getUsers(ids));
    return named ?? found;
  }
}

/** The single instance log. */
export const auditLog = (env: Env) => env.AUDIT_LOG.getByName('instance');
