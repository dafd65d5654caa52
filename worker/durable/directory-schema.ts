/** The Directory's tables. Append new migrations; never edit one that has shipped. */
export const directoryMigrations = [
  `CREATE TABLE users (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     username TEXT NOT NULL UNIQUE COLLATE NOCASE,
     name TEXT NOT NULL,
     email TEXT UNIQUE COLLATE NOCASE,
     password_hash TEXT,
     admin INTEGER NOT NULL DEFAULT 0,
     state TEXT NOT NULL DEFAULT 'active',
     created_at TEXT NOT NULL
   );
   CREATE TABLE applications (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     client_id TEXT NOT NULL UNIQUE,
     secret_hash TEXT,
     name TEXT NOT NULL,
     redirect_uris TEXT NOT NULL,
     scopes TEXT NOT NULL,
     confidential INTEGER NOT NULL,
     owner_id INTEGER,
     created_at TEXT NOT NULL
   );
   CREATE TABLE sessions (
     id_hash TEXT PRIMARY KEY,
     user_id INTEGER NOT NULL,
     csrf_token TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_expiry ON sessions (expires_at);
   CREATE TABLE login_failures (
     key TEXT NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE INDEX login_failures_key ON login_failures (key, at);`,
];
