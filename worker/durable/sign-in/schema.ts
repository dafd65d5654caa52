/**
 * The tables of one `SignIn` object, as one baseline: nothing has been released, so there is no
 * earlier state to upgrade. A later release appends a step to this list and never edits one that
 * shipped (docs/deploy.md, "Changing a schema"). Both roles of the class have every table and use
 * their own: a `name:` partition `logins` and `failures` (by lower-case username); an `address:`
 * partition `failures` (by client address).
 *
 * `logins`: the login record of each user whose username falls in this partition, one row per user
 * id, with the users row's version (forward-only). A row whose `username` is NULL says the user's
 * name is no longer here (renamed elsewhere, or deleted) as of that version.
 */
export const SIGN_IN_SCHEMA = [
  `CREATE TABLE logins (
     user_id INTEGER PRIMARY KEY,
     username TEXT UNIQUE COLLATE NOCASE,
     user TEXT,
     password_hash TEXT,
     version INTEGER NOT NULL
   );
   CREATE TABLE failures (
     key TEXT NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE INDEX failures_key ON failures (key, at);
   CREATE INDEX failures_at ON failures (at);`,
];
