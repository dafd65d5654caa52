import type { EventRecord, UserRef } from '../events/event';

/**
 * The `events` table of a group's or project's object, or of the instance log (see
 * event-log-schema.ts): append (idempotent by the event's uuid), list newest first, and the
 * events still to be copied up to ancestor groups and the instance log.
 */

export interface AuditFilter {
  /** ISO 8601 times, inclusive (GitLab's `created_after` / `created_before`). */
  createdAfter?: string;
  createdBefore?: string;
  entityType?: 'group' | 'project';
  entityId?: number;
  /** Only the events this user made (a Developer's own, GitLab's `author_id`). */
  authorId?: number;
}

export interface LoggedEvent {
  /** The event's place in this log (its audit event id is `record.id`, the same in every log). */
  seq: number;
  record: EventRecord;
}

type Row = { seq: number; record: string };
const toLogged = (r: Row): LoggedEvent => ({ seq: r.seq, record: JSON.parse(r.record) as EventRecord });

/** The SQL condition of `filter` on the events table, and its arguments. */
const whereOf = (filter: AuditFilter): { clause: string; args: (string | number)[] } => {
  const conditions: [string, string | number | undefined][] = [
    ['created_at >= ?', filter.createdAfter],
    ['created_at <= ?', filter.createdBefore],
    ['entity_type = ?', filter.entityType],
    ['entity_id = ?', filter.entityId],
    ['author_id = ?', filter.authorId],
  ];
  const given = conditions.filter((c): c is [string, string | number] => c[1] !== undefined);
  return { clause: given.length ? `WHERE ${given.map(([condition]) => condition).join(' AND ')}` : '', args: given.map(([, value]) => value) };
};

/** How a user's names are found when an event was recorded without them. */
export type UserLookup = (ids: number[]) => Promise<{ id: number; username: string; name: string }[]>;

export class EventLog {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Adds `e` unless an event with its uuid is here already (a copy delivered twice). Returns its
   * place, or null for a duplicate. Runs inside the caller's transaction.
   */
  append(e: EventRecord, forward: boolean): number | null {
    const row = this.sql
      .exec<{ seq: number }>(
        `INSERT INTO events (id, uuid, entity_type, entity_id, author_id, action, created_at, record, forward) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (uuid) DO NOTHING RETURNING seq`,
        e.id,
        e.uuid,
        e.entity.kind,
        e.entity.id,
        e.author?.id ?? null,
        e.action,
        e.created_at,
        JSON.stringify(e),
        forward ? 1 : 0,
      )
      .toArray()[0];
    return row?.seq ?? null;
  }

  /**
   * Newest first (GitLab's order), filtered by time and entity; one index range per page. Ties in
   * time go by id, so every log, and the instance log's parts merged, order alike.
   */
  list(filter: AuditFilter, offset: number, limit: number): { total: number; items: LoggedEvent[] } {
    const { clause, args } = whereOf(filter);
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM events ${clause}`, ...args).one().n;
    const items = this.sql
      .exec<Row>(`SELECT seq, record FROM events ${clause} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toLogged);
    return { total, items };
  }

  /** One event by its audit id, if it passes `filter` (GitLab finds one within the same filters it lists with). */
  find(id: number, filter: AuditFilter = {}): LoggedEvent | null {
    const { clause, args } = whereOf(filter);
    const row = this.sql.exec<Row>(`SELECT seq, record FROM events ${clause ? `${clause} AND` : 'WHERE'} id = ?`, ...args, id).toArray()[0];
    return row ? toLogged(row) : null;
  }

  /** One event by its place in this log. */
  at(seq: number): LoggedEvent | null {
    const row = this.sql.exec<Row>('SELECT seq, record FROM events WHERE seq = ?', seq).toArray()[0];
    return row ? toLogged(row) : null;
  }

  /** Events still to be copied to the ancestor groups and the instance log, oldest first. */
  pendingForward(limit: number): LoggedEvent[] {
    return this.sql.exec<Row>('SELECT seq, record FROM events WHERE forward = 1 ORDER BY seq LIMIT ?', limit).toArray().map(toLogged);
  }

  /** When the oldest event still to be copied up happened (ISO 8601), or null when none is. */
  oldestPendingForward(): string | null {
    return this.sql.exec<{ created_at: string }>('SELECT created_at FROM events WHERE forward = 1 ORDER BY seq LIMIT 1').toArray()[0]?.created_at ?? null;
  }

  markForwarded(seqs: number[]): void {
    this.sql.exec('UPDATE events SET forward = 0 WHERE seq IN (SELECT value FROM json_each(?))', JSON.stringify(seqs));
  }

  /**
   * Fills in the names of authors and users an event was recorded without (a change whose
   * object did not have them at hand), with one lookup for all of `items`, and keeps them, so a
   * delivery's body stays the same across retries.
   */
  async withNames(items: LoggedEvent[], lookup: UserLookup): Promise<LoggedEvent[]> {
    const unnamed = (u: UserRef | null): u is UserRef => u !== null && (u.username === null || u.name === null);
    const ids = new Set(items.flatMap(({ record: r }) => [r.author, r.user].filter(unnamed).map((u) => u.id)));
    if (ids.size === 0) return items;
    let users: Awaited<ReturnType<UserLookup>>;
    try {
      users = await lookup([...ids]);
    } catch (e) {
      console.warn('user names for events could not be looked up', e);
      return items;
    }
    const byId = new Map(users.map((u) => [u.id, u]));
    const named = (u: UserRef | null): UserRef | null => {
      const found = unnamed(u) ? byId.get(u.id) : undefined;
      return found && u ? { id: u.id, username: found.username, name: found.name } : u;
    };
    return items.map(({ seq, record }) => {
      const filled = { ...record, author: named(record.author), user: named(record.user) };
      if (filled.author !== record.author || filled.user !== record.user) {
        this.sql.exec('UPDATE events SET record = ? WHERE seq = ?', JSON.stringify(filled), seq);
      }
      return { seq, record: filled };
    });
  }
}
