/**
 * The tables of one application's `ClientHolders` object, as one baseline: nothing has been
 * released, so there is no earlier state to upgrade. A later release appends a step to this list
 * and never edits one that shipped (docs/deploy.md, "Changing a schema").
 *
 * - `holders`: the users holding (or about to hold) grants for the application.
 * - `application`: the application itself, copied from the Directory the first time it is looked
 *   up (applications are never edited), so resolving a client id reaches only this object;
 *   `deleted` is final; `ending`: the client id of a deleted application whose holders' grants are
 *   still to be ended (until done).
 * - `logout_deliveries`: back-channel logouts still to be delivered (backchannel.ts), one per
 *   `jti`; `logout_log`: every attempt of the last seven days.
 */
export const CLIENT_HOLDERS_SCHEMA = [
  `CREATE TABLE holders (
     user_id INTEGER PRIMARY KEY
   );
   CREATE TABLE application (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     row TEXT,
     deleted INTEGER NOT NULL DEFAULT 0,
     ending TEXT
   );
   CREATE TABLE logout_deliveries (
     jti TEXT PRIMARY KEY,
     user_id INTEGER NOT NULL,
     sid TEXT,
     issuer TEXT NOT NULL,
     reason TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL
   );
   CREATE INDEX logout_deliveries_due ON logout_deliveries (next_attempt_at);
   CREATE TABLE logout_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     jti TEXT NOT NULL,
     user_id INTEGER NOT NULL,
     sid TEXT,
     reason TEXT NOT NULL,
     url TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     response_status INTEGER,
     response_body TEXT NOT NULL,
     error TEXT,
     created_at TEXT NOT NULL
   );
   CREATE INDEX logout_log_jti ON logout_log (jti);`,
];
