import { INBOX_TABLES_V1 } from '../index-partition/inbox-schema';

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
  // Groups, projects and personal (user) namespaces share one path registry, so a full path names
  // exactly one of them. `memberships` is the per-user index of the namespaces' members, pushed
  // by each namespace's Durable Object (see docs/architecture.md).
  `CREATE TABLE namespaces (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL CHECK (kind IN ('group', 'project', 'user')),
     name TEXT NOT NULL,
     path TEXT NOT NULL,
     full_path TEXT NOT NULL UNIQUE COLLATE NOCASE,
     full_name TEXT NOT NULL,
     parent_id INTEGER REFERENCES namespaces (id),
     visibility TEXT NOT NULL,
     request_access_enabled INTEGER NOT NULL,
     description TEXT NOT NULL DEFAULT '',
     creator_id INTEGER,
     created_at TEXT NOT NULL
   );
   CREATE INDEX namespaces_parent ON namespaces (parent_id);
   CREATE INDEX namespaces_kind ON namespaces (kind, id);
   CREATE TABLE memberships (
     user_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER,
     version INTEGER NOT NULL,
     PRIMARY KEY (user_id, namespace_id)
   ) WITHOUT ROWID;
   CREATE INDEX memberships_namespace ON memberships (namespace_id, access_level);`,
  // Personal access tokens and impersonation tokens (GitLab's `personal_access_tokens`): what
  // lists and revokes them. The token itself is only in KV, under its keyed hash.
  `CREATE TABLE access_tokens (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL,
     name TEXT NOT NULL,
     scopes TEXT NOT NULL,
     impersonation INTEGER NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     revoked INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX access_tokens_user ON access_tokens (user_id, id);`,
  // Groups and projects can be renamed, edited and deleted. `version` rises with every change of a
  // registry row that a namespace's object keeps a copy of (its settings, its full path, also when
  // an ancestor is renamed); the objects keep the newest they were told. `pending_requests` is the
  // per-user index of pending access requests, pushed by the namespaces' objects through the same
  // outbox as `memberships` (level 1 pending, 0 gone; forward-only by version).
  `ALTER TABLE namespaces ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE memberships ADD COLUMN expires_at TEXT;
   CREATE TABLE pending_requests (
     user_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     pending INTEGER NOT NULL,
     version INTEGER NOT NULL,
     PRIMARY KEY (user_id, namespace_id)
   ) WITHOUT ROWID;`,
  // Users can be edited, blocked, deactivated and deleted. `version` rises with every change of a
  // users row; what copies it (each user's grant authority, the profile inside access tokens in KV,
  // the names stored with pending requests) is brought up to it by the fan-out that
  // `user_changes` (an outbox, written in the same transaction as the change) drives until done.
  // `builtin` marks the administrator behind ADMIN_TOKEN (`root`), found by it, not by its name.
  `ALTER TABLE users ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE users ADD COLUMN builtin INTEGER NOT NULL DEFAULT 0;
   UPDATE users SET builtin = 1
     WHERE id = (SELECT MIN(id) FROM users WHERE username = 'root' AND admin = 1 AND password_hash IS NULL);
   CREATE TABLE user_changes (
     user_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL,
     deleted_namespaces TEXT NOT NULL DEFAULT '[]'
   );
   CREATE INDEX sessions_user ON sessions (user_id);`,
  // Audit events of settings changes (`PUT /groups/:id`), written in the transaction that makes
  // the change and handed to the group's or project's own object, which keeps its audit log; a
  // row stays until that object has it, and the Directory's alarm hands over what was left.
  `CREATE TABLE namespace_events (
     uuid TEXT PRIMARY KEY,
     namespace_id INTEGER NOT NULL,
     record TEXT NOT NULL
   );`,
  // When a personal access token or impersonation token was last used (GitLab's `last_used_at`),
  // written at most every 10 minutes per token and isolate.
  `ALTER TABLE access_tokens ADD COLUMN last_used_at TEXT;`,
  // The owners' inbox (see inbox-index.ts). The requester index keeps when each request was made
  // and how it ended (outcome, with the level and expiry an approval granted, who decided and
  // when). `request_scopes` holds each pending request's source and its ancestors; `inbox` one
  // row per pending request and user who may act on it, with their level there and the earliest
  // expiry of the memberships that level rests on; `inbox_versions` each user's inbox version.
  `ALTER TABLE pending_requests ADD COLUMN requested_at TEXT;
   ALTER TABLE pending_requests ADD COLUMN outcome TEXT;
   ALTER TABLE pending_requests ADD COLUMN access_level INTEGER;
   ALTER TABLE pending_requests ADD COLUMN expires_at TEXT;
   ALTER TABLE pending_requests ADD COLUMN decided_by INTEGER;
   ALTER TABLE pending_requests ADD COLUMN decided_at TEXT;
   CREATE INDEX pending_requests_open ON pending_requests (requested_at, namespace_id, user_id) WHERE pending = 1;
   ${INBOX_TABLES_V1}`,
  // Browser sessions now live in each user's grant authority (legacy rows here are still honoured
  // until they expire): a change of password reaches them through the user fan-out, which this
  // flag tells to end the sessions begun before it.
  `ALTER TABLE user_changes ADD COLUMN end_sessions INTEGER NOT NULL DEFAULT 0;`,
  // Settings a deployment records once and checks after (`partition_count`: the number of
  // partitions its partitioned objects were created with, see partitions.ts).
  `CREATE TABLE settings (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
  // Sign-in moved to the `name:` and `address:` partitions (logins.ts): a user's fan-out also tells
  // the partitions of the names the user had before (a rename, a deletion) that the name is gone.
  // `login_failures` stays unused (the throttles start afresh there; they cover 15 minutes).
  `ALTER TABLE user_changes ADD COLUMN former_names TEXT NOT NULL DEFAULT '[]';`,
  // The index partitions keep a copy of every registry row of their trees (the lists of groups and
  // projects a user reaches are read there). Every insert into or update of `namespaces` queues
  // the row's id here in the same statement, so no code path can change a row without it; the
  // queue is pushed before the change answers and by the alarm after a crash. Rows from before
  // are queued once here.
  `CREATE TABLE registry_outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     namespace_id INTEGER NOT NULL
   );
   CREATE TRIGGER namespaces_inserted AFTER INSERT ON namespaces BEGIN
     INSERT INTO registry_outbox (namespace_id) VALUES (NEW.id);
   END;
   CREATE TRIGGER namespaces_updated AFTER UPDATE ON namespaces BEGIN
     INSERT INTO registry_outbox (namespace_id) VALUES (NEW.id);
   END;
   INSERT INTO registry_outbox (namespace_id) SELECT id FROM namespaces ORDER BY id;`,
];
