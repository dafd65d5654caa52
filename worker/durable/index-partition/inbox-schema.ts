/** The owners' inbox tables (see inbox-index.ts), part of each index partition's schema (schema.ts). */
export const INBOX_TABLES_V1 = `CREATE TABLE request_scopes (
     scope_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     PRIMARY KEY (scope_id, namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX request_scopes_request ON request_scopes (namespace_id, user_id);
   CREATE TABLE inbox (
     manager_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     requested_at TEXT NOT NULL,
     kind TEXT NOT NULL,
     access_level INTEGER NOT NULL,
     until TEXT,
     PRIMARY KEY (manager_id, namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX inbox_order ON inbox (manager_id, requested_at);
   CREATE INDEX inbox_request ON inbox (namespace_id, user_id);
   CREATE INDEX inbox_due ON inbox (manager_id, until) WHERE until IS NOT NULL;
   CREATE TABLE inbox_versions (
     user_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL
   );`;
