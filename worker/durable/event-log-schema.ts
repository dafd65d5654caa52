/**
 * The audit events table, kept by every group's and project's object (its own events and those of
 * everything below it) and by each part of the instance log; both schemas include this text.
 *
 * `record` is the event as JSON (worker/events/event.ts); the columns beside it are what lists
 * filter and order by. `forward` marks an event this object still has to copy to its ancestor
 * groups and to the instance log.
 */
export const EVENTS_TABLE = `
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL,
    entity_id INTEGER NOT NULL,
    action TEXT NOT NULL,
    created_at TEXT NOT NULL,
    record TEXT NOT NULL,
    forward INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX events_created ON events (created_at, seq);
  CREATE INDEX events_forward ON events (seq) WHERE forward = 1;`;
