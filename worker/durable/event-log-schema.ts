/**
 * The audit events table, kept by every group's and project's object (its own events and those of
 * everything below it) and by each part of the instance log; both schemas include this text.
 *
 * `record` is the event as JSON (worker/events/event.ts); the columns beside it are what lists
 * filter and order by: `id`, the event's audit id, the same in every log (`eventId`); `author_id`,
 * the author's user id, null when Knock made the change. `seq` is the row's place in this log,
 * which the queues of this object (copying up, webhook deliveries) refer to. `forward` marks an event this object still has to copy to its ancestor
 * groups and to the instance log.
 */
export const EVENTS_TABLE = `
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id INTEGER NOT NULL UNIQUE,
    uuid TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL,
    entity_id INTEGER NOT NULL,
    author_id INTEGER,
    action TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL,
    forward INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX events_created ON events (created_at, id);
  CREATE INDEX events_author ON events (author_id, created_at, id);
  CREATE INDEX events_forward ON events (seq) WHERE forward = 1;`;
