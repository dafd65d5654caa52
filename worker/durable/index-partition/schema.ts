import { INBOX_TABLES } from './inbox-schema';

/**
 * The tables of one index partition (`IndexPartition`, named `index:<p>`), as one baseline:
 * nothing has been released, so there is no earlier state to upgrade. A later release appends a
 * step to this list and never edits one that shipped (docs/deploy.md, "Changing a schema").
 *
 * The membership, requester and inbox indexes of the trees whose root's id falls in partition p,
 * which namespace-registry.ts and inbox-index.ts run over.
 *
 * `namespaces` and `users` are copies, not registries: no uniqueness (a rename swap may pass
 * through two rows with one name), each row kept with the registry's or users row's version. The
 * registry rows of this partition's trees come whole from the Directory's registry outbox (every
 * column the API shows); an ancestor known only by id is a placeholder (version 0) until its own
 * copy comes. `deleted_namespaces` remembers groups and projects deleted so that a late push cannot
 * bring their rows back. `known_users`: users with rows here, and whether their `User` object has
 * recorded this partition (`registered`). Finding a group or project by id needs no table: an id
 * is in its tree's partition (partitions.ts `idInTreeOf`). By full path: `registry_tops` names the
 * tree of each top-level path whose partition by name this is; the tree's partition then finds the
 * row.
 */
export const INDEX_PARTITION_SCHEMA = [
  `CREATE TABLE namespaces (
     id INTEGER PRIMARY KEY,
     kind TEXT NOT NULL,
     name TEXT NOT NULL,
     path TEXT NOT NULL DEFAULT '',
     full_path TEXT NOT NULL,
     full_name TEXT NOT NULL DEFAULT '',
     parent_id INTEGER,
     visibility TEXT NOT NULL,
     request_access_enabled INTEGER NOT NULL DEFAULT 1,
     require_two_factor_authentication INTEGER NOT NULL DEFAULT 0,
     description TEXT NOT NULL DEFAULT '',
     creator_id INTEGER,
     created_at TEXT NOT NULL DEFAULT '',
     version INTEGER NOT NULL
   );
   CREATE INDEX namespaces_parent ON namespaces (parent_id);
   CREATE INDEX namespaces_full_path ON namespaces (full_path COLLATE NOCASE);
   CREATE TABLE users (
     id INTEGER PRIMARY KEY,
     username TEXT NOT NULL,
     name TEXT NOT NULL,
     state TEXT NOT NULL,
     version INTEGER NOT NULL
   );
   CREATE TABLE memberships (
     user_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER,
     version INTEGER NOT NULL,
     expires_at TEXT,
     PRIMARY KEY (user_id, namespace_id)
   ) WITHOUT ROWID;
   CREATE INDEX memberships_namespace ON memberships (namespace_id, access_level);
   CREATE TABLE pending_requests (
     user_id INTEGER NOT NULL,
     namespace_id INTEGER NOT NULL,
     pending INTEGER NOT NULL,
     version INTEGER NOT NULL,
     requested_at TEXT,
     outcome TEXT,
     access_level INTEGER,
     expires_at TEXT,
     decided_by INTEGER,
     decided_at TEXT,
     details TEXT,
     PRIMARY KEY (user_id, namespace_id)
   ) WITHOUT ROWID;
   CREATE INDEX pending_requests_open ON pending_requests (requested_at, namespace_id, user_id) WHERE pending = 1;
   ${INBOX_TABLES}
   CREATE TABLE known_users (
     user_id INTEGER PRIMARY KEY,
     registered INTEGER NOT NULL
   );
   -- Every push asks for the users still to register: those few, without a scan of all.
   CREATE INDEX known_users_waiting ON known_users (user_id) WHERE registered = 0;
   CREATE TABLE deleted_namespaces (
     id INTEGER PRIMARY KEY
   );
   CREATE TABLE registry_tops (
     path TEXT PRIMARY KEY COLLATE NOCASE,
     root_id INTEGER NOT NULL
   );
   -- Users whose group membership ended or went down, for their User object (claim-checks.ts);
   -- \`losses\` counts the changes queued, so a check sent before the last one does not clear it.
   CREATE TABLE claim_checks (
     user_id INTEGER PRIMARY KEY,
     losses INTEGER NOT NULL DEFAULT 1
   );`,
];
