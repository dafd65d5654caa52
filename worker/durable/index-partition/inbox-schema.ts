/** Each pending request's source and every ancestor of it. */
const REQUEST_SCOPES = `CREATE TABLE request_scopes (
     scope_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     PRIMARY KEY (scope_id, namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX request_scopes_request ON request_scopes (namespace_id, user_id);`;

/** A number per user that rises with every change of their inbox. */
const INBOX_VERSIONS = `CREATE TABLE inbox_versions (
     user_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL
   );`;

/**
 * The owners' inbox tables of an index partition (see inbox-index.ts): `request_scopes`, one row
 * per manager and request with the memberships the manager's standing rests on (`inbox`),
 * `inbox_versions`, and the managers whose share still waits to be sent to their `User`
 * (`inbox_outbox`, with the version to send).
 */
export const INBOX_TABLES = `${REQUEST_SCOPES}
   CREATE TABLE inbox (
     manager_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     grants TEXT NOT NULL,
     PRIMARY KEY (manager_id, namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX inbox_request ON inbox (namespace_id, user_id);
   ${INBOX_VERSIONS}
   CREATE TABLE inbox_outbox (
     manager_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL
   );`;
