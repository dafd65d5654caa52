/**
 * The tables of one partition of the device authorizations (RFC 8628), as one baseline: nothing
 * has been released, so there is no earlier state to upgrade (docs/deploy.md, "Changing a schema").
 *
 * - `device_authorizations`: one row per authorization a device started, under the keyed hash of
 *   its device code (the primary key) and of its user code (unique: the lookup of a code a person
 *   types). `state`: `pending` until the user decides, then `approved` (with the authorization
 *   code issued by the user's `User` object, sealed under TOKEN_HASH_KEY and bound to the row,
 *   and the user's id) or `denied`; `redeemed` once a poll took the approval. `interval` is the
 *   polling interval in seconds (raised by `slow_down`), `polled_at` the last poll (ms),
 *   `expires_at` epoch seconds. A row is kept an hour past its expiry, so a late poll is told
 *   `expired_token`, then deleted by the alarm.
 */
export const DEVICE_AUTHORIZATIONS_SCHEMA = [
  `CREATE TABLE device_authorizations (
     device_hash TEXT PRIMARY KEY,
     user_code_hash TEXT NOT NULL UNIQUE,
     client_id TEXT NOT NULL,
     scopes TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     interval INTEGER NOT NULL,
     polled_at INTEGER,
     state TEXT NOT NULL,
     sealed_code TEXT,
     user_id INTEGER
   );
   CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);`,
];
