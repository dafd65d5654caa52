/** Each pending request's source and every ancestor of it. */
const REQUEST_SCOPES = `CREATE TABLE request_scopes (
     scope_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     PRIMARY KEY (scope_id, namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX request_scopes_request ON request_scopes (namespace_id, user_id);`;

/**
 * A number per user that rises with every change of their inbox here, and the highest one their
 * `User` has taken (`sent`): the next delta carries every row changed after it.
 */
const INBOX_VERSIONS = `CREATE TABLE inbox_versions (
     user_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL,
     sent INTEGER NOT NULL DEFAULT 0
   );`;

/**
 * The owners' inbox tables of an index partition (see inbox-index.ts): `request_scopes`, one row
 * per manager and request with the memberships the manager's standing rests on (`inbox`),
 * `inbox_versions`, the managers whose changes still wait to be sent to their `User`
 * (`inbox_outbox`, with the version to send, and whether their `User` asked for its whole share
 * again), and which of their rows changed since the version their `User` took
 * (`inbox_changes`, each with the version that last changed it).
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
     version INTEGER NOT NULL,
     resync INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE inbox_changes (
     manager_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     version INTEGER NOT NULL,
     PRIMARY KEY (manager_id, namespace_id, user_id)
   ) WITHOUT ROWID;`;
