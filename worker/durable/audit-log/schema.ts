import { EVENTS_TABLE } from '../event-log-schema';

/**
 * The tables of one part of the instance log (audit-log.ts), as one baseline: the events, and the
 * index by group or project behind `GET /audit_events?entity_type&entity_id`. A later release
 * appends a step to this list and never edits one that shipped (docs/deploy.md, "Changing a
 * schema").
 */
export const AUDIT_LOG_SCHEMA = [`${EVENTS_TABLE}\n  CREATE INDEX events_entity ON events (entity_type, entity_id, created_at, id);`];
