/**
 * The Directory's tables, as one baseline: nothing has been released, so there is no earlier
 * state to upgrade. A later release appends a step to this list and never edits one that
 * shipped (docs/deploy.md, "Changing a schema").
 *
 * - `users`: `version` rises with every change of a row; what copies it (each user's `User`
 *   object, the profile inside access tokens in KV, the login records in the `name:` partitions,
 *   the names stored with pending requests) is brought up to it by the fan-out that `user_changes`
 *   (an outbox, written in the same transaction as the change) drives until done.
 *   `two_factor_enabled` is itself a copy: the user's `User` object owns the factors and pushes it. `builtin` marks
 *   the administrator behind ADMIN_TOKEN (`root`), found by it, not by its name.
 * - `user_changes`: `end_sessions` tells the fan-out that a new password ends the browser sessions
 *   begun before it; `former_names`, that the `name:` partitions of the names the user had (a
 *   rename, a deletion) must learn the name is gone.
 * - `namespaces`: groups, projects and personal (user) namespaces share one path registry, so a
 *   full path names exactly one of them. `version` rises with every change of a row that the
 *   groups' and projects' objects and the index partitions keep a copy of (its settings, its full
 *   path, also when an ancestor is renamed). Every insert, update and deletion of a row queues
 *   its id in `registry_outbox` in the same statement (the triggers), so no code path can change
 *   a row without it; the queue is pushed before the change answers, and by the alarm after a
 *   crash: each row to its index partitions, a changed or deleted group's or project's to its
 *   object, a deleted personal namespace's to its partition (registry.ts `pushRegistryBatch`).
 * - `access_tokens`: personal access tokens and impersonation tokens (GitLab's
 *   `personal_access_tokens`), what lists and revokes them; the token itself is only in KV, under
 *   its keyed hash. `last_used_at` is written at most every 10 minutes per token and isolate.
 * - `namespace_events`: audit events of settings changes (`PUT /groups/:id`), written in the
 *   transaction that makes the change and kept until the group's or project's object has them.
 * - `settings`: what a deployment records once and checks after (`partition_count`, see
 *   worker/middleware/partition-count.ts).
 */
export const DIRECTORY_SCHEMA = [
  `CREATE TABLE users (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     username TEXT NOT NULL UNIQUE COLLATE NOCASE,
     name TEXT NOT NULL,
     email TEXT UNIQUE COLLATE NOCASE,
     password_hash TEXT,
     admin INTEGER NOT NULL DEFAULT 0,
     state TEXT NOT NULL DEFAULT 'active',
     created_at TEXT NOT NULL,
     version INTEGER NOT NULL DEFAULT 1,
     builtin INTEGER NOT NULL DEFAULT 0,
     two_factor_enabled INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE user_changes (
     user_id INTEGER PRIMARY KEY,
     version INTEGER NOT NULL,
     end_sessions INTEGER NOT NULL DEFAULT 0,
     former_names TEXT NOT NULL DEFAULT '[]'
   );
   CREATE TABLE applications (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     client_id TEXT NOT NULL UNIQUE,
     secret_hash TEXT,
     name TEXT NOT NULL,
     redirect_uris TEXT NOT NULL,
     scopes TEXT NOT NULL,
     confidential INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     backchannel_logout_uri TEXT,
     post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]'
   );
   CREATE TABLE namespaces (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL CHECK (kind IN ('group', 'project', 'user')),
     name TEXT NOT NULL,
     path TEXT NOT NULL,
     full_path TEXT NOT NULL UNIQUE COLLATE NOCASE,
     full_name TEXT NOT NULL,
     parent_id INTEGER REFERENCES namespaces (id),
     visibility TEXT NOT NULL,
     request_access_enabled INTEGER NOT NULL,
     require_two_factor_authentication INTEGER NOT NULL DEFAULT 0,
     description TEXT NOT NULL DEFAULT '',
     creator_id INTEGER,
     created_at TEXT NOT NULL,
     version INTEGER NOT NULL DEFAULT 1
   );
   CREATE INDEX namespaces_parent ON namespaces (parent_id);
   CREATE INDEX namespaces_kind ON namespaces (kind, id);
   CREATE TABLE registry_outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     namespace_id INTEGER NOT NULL,
     -- A deleted row's kind ('group', 'project' or 'user'); NULL for an inserted or updated row.
     deleted_kind TEXT
   );
   CREATE TRIGGER namespaces_inserted AFTER INSERT ON namespaces BEGIN
     INSERT INTO registry_outbox (namespace_id) VALUES (NEW.id);
   END;
   CREATE TRIGGER namespaces_updated AFTER UPDATE ON namespaces BEGIN
     INSERT INTO registry_outbox (namespace_id) VALUES (NEW.id);
   END;
   CREATE TRIGGER namespaces_deleted AFTER DELETE ON namespaces BEGIN
     INSERT INTO registry_outbox (namespace_id, deleted_kind) VALUES (OLD.id, OLD.kind);
   END;
   CREATE TABLE access_tokens (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL,
     name TEXT NOT NULL,
     scopes TEXT NOT NULL,
     impersonation INTEGER NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     revoked INTEGER NOT NULL DEFAULT 0,
     last_used_at TEXT
   );
   CREATE INDEX access_tokens_user ON access_tokens (user_id, id);
   CREATE TABLE namespace_events (
     uuid TEXT PRIMARY KEY,
     namespace_id INTEGER NOT NULL,
     record TEXT NOT NULL
   );
   CREATE TABLE settings (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
];
