import { EVENTS_TABLE_V1 } from '../event-log-schema';

/**
 * The tables of one group's or project's Durable Object. Append new migrations; never edit one
 * that has shipped.
 *
 * Triggers keep the bookkeeping in the database itself, so no code path can forget it:
 * - every change to `members` bumps `meta.version` and writes an `outbox` row carrying that
 *   version (level 0 for a removal), in the same transaction as the change. The outbox is what
 *   gets pushed to the Directory's membership index;
 * - `meta.members` and `meta.requests` count the rows, so a page's `X-Total` costs one row read.
 */
export const namespaceMigrations = [
  `CREATE TABLE meta (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     namespace_id INTEGER NOT NULL,
     kind TEXT NOT NULL,
     version INTEGER NOT NULL DEFAULT 0,
     members INTEGER NOT NULL DEFAULT 0,
     requests INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE members (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL UNIQUE,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER,
     expires_at TEXT
   );
   -- The requester's username and name are copied in when the request is made, so this object
   -- alone answers a page of requests.
   CREATE TABLE access_requests (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL UNIQUE,
     requested_at TEXT NOT NULL,
     username TEXT NOT NULL,
     name TEXT NOT NULL
   );
   CREATE TABLE outbox (
     version INTEGER PRIMARY KEY,
     user_id INTEGER NOT NULL,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER
   );
   CREATE TRIGGER members_added AFTER INSERT ON members BEGIN
     UPDATE meta SET version = version + 1, members = members + 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by)
       SELECT version, NEW.user_id, NEW.access_level, NEW.created_at, NEW.created_by FROM meta;
   END;
   CREATE TRIGGER members_changed AFTER UPDATE ON members BEGIN
     UPDATE meta SET version = version + 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by)
       SELECT version, NEW.user_id, NEW.access_level, NEW.created_at, NEW.created_by FROM meta;
   END;
   CREATE TRIGGER members_removed AFTER DELETE ON members BEGIN
     UPDATE meta SET version = version + 1, members = members - 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by)
       SELECT version, OLD.user_id, 0, OLD.created_at, OLD.created_by FROM meta;
   END;
   CREATE TRIGGER requests_added AFTER INSERT ON access_requests BEGIN
     UPDATE meta SET requests = requests + 1;
   END;
   CREATE TRIGGER requests_removed AFTER DELETE ON access_requests BEGIN
     UPDATE meta SET requests = requests - 1;
   END;`,
  // Settings the object judges by (visibility, request_access_enabled) and the full path it is
  // known by, each with the Directory's version of the registry row, so an older write never wins;
  // `deleted` once the group or project is gone. Outbox rows also carry pending-request changes
  // (`entry = 'request'`, level 1 pending, 0 gone) for the Directory's requester index, and the
  // members' expiry date. Members expire at 00:00 UTC of `expires_at` (the alarm removes them).
  `ALTER TABLE meta ADD COLUMN visibility TEXT;
   ALTER TABLE meta ADD COLUMN request_access_enabled INTEGER;
   ALTER TABLE meta ADD COLUMN full_path TEXT;
   ALTER TABLE meta ADD COLUMN registry_version INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE meta ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE outbox ADD COLUMN entry TEXT NOT NULL DEFAULT 'member';
   ALTER TABLE outbox ADD COLUMN expires_at TEXT;
   CREATE INDEX members_expiry ON members (expires_at) WHERE expires_at IS NOT NULL;
   DROP TRIGGER members_added;
   DROP TRIGGER members_changed;
   DROP TRIGGER members_removed;
   DROP TRIGGER requests_added;
   DROP TRIGGER requests_removed;
   CREATE TRIGGER members_added AFTER INSERT ON members BEGIN
     UPDATE meta SET version = version + 1, members = members + 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by, expires_at)
       SELECT version, NEW.user_id, NEW.access_level, NEW.created_at, NEW.created_by, NEW.expires_at FROM meta;
   END;
   CREATE TRIGGER members_changed AFTER UPDATE ON members BEGIN
     UPDATE meta SET version = version + 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by, expires_at)
       SELECT version, NEW.user_id, NEW.access_level, NEW.created_at, NEW.created_by, NEW.expires_at FROM meta;
   END;
   CREATE TRIGGER members_removed AFTER DELETE ON members BEGIN
     UPDATE meta SET version = version + 1, members = members - 1;
     INSERT INTO outbox (version, user_id, access_level, created_at, created_by)
       SELECT version, OLD.user_id, 0, OLD.created_at, OLD.created_by FROM meta;
   END;
   CREATE TRIGGER requests_added AFTER INSERT ON access_requests BEGIN
     UPDATE meta SET requests = requests + 1, version = version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at)
       SELECT version, 'request', NEW.user_id, 1, NEW.requested_at FROM meta;
   END;
   CREATE TRIGGER requests_removed AFTER DELETE ON access_requests BEGIN
     UPDATE meta SET requests = requests - 1, version = version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at)
       SELECT version, 'request', OLD.user_id, 0, OLD.requested_at FROM meta;
   END;`,
  // The version of the requester's users row that the stored names come from (0: as the token
  // record had them), so a rename is applied only over older names.
  `ALTER TABLE access_requests ADD COLUMN requester_version INTEGER NOT NULL DEFAULT 0;`,
  // Events and webhooks (docs/architecture.md#events-and-webhooks). The object also keeps its name
  // (events carry it), once known its ancestor groups (events are copied to their logs), and how
  // many events of its own it has numbered (`eventId`).
  // `hooks` hold their secret token and signing secret sealed (worker/auth/secret-box.ts), and
  // GitLab's failure count and rest; `deliveries` is the queue of (hook, event) still to send, due
  // at `next_attempt_at` (epoch ms); `hook_logs` records every attempt for seven days.
  `ALTER TABLE meta ADD COLUMN name TEXT;
   ALTER TABLE meta ADD COLUMN ancestor_ids TEXT;
   ALTER TABLE meta ADD COLUMN events_numbered INTEGER NOT NULL DEFAULT 0;
   ${EVENTS_TABLE_V1}
   CREATE TABLE hooks (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     uuid TEXT NOT NULL UNIQUE,
     url TEXT NOT NULL,
     name TEXT NOT NULL,
     description TEXT NOT NULL,
     token TEXT,
     signing_secret TEXT NOT NULL,
     member_events INTEGER NOT NULL,
     access_request_events INTEGER NOT NULL,
     enable_ssl_verification INTEGER NOT NULL,
     instance_url TEXT NOT NULL,
     recent_failures INTEGER NOT NULL DEFAULT 0,
     disabled_until INTEGER,
     created_at TEXT NOT NULL
   );
   CREATE TABLE deliveries (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     hook_id INTEGER NOT NULL,
     event_seq INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL
   );
   CREATE INDEX deliveries_due ON deliveries (hook_id, next_attempt_at, id);
   CREATE TABLE hook_logs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     hook_id INTEGER NOT NULL,
     event_uuid TEXT NOT NULL,
     trigger TEXT NOT NULL,
     url TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     request_headers TEXT NOT NULL,
     request_body TEXT NOT NULL,
     response_status INTEGER,
     response_headers TEXT NOT NULL,
     response_body TEXT NOT NULL,
     duration_ms REAL NOT NULL,
     error TEXT,
     created_at TEXT NOT NULL
   );
   CREATE INDEX hook_logs_hook ON hook_logs (hook_id, id);
   CREATE INDEX hook_logs_created ON hook_logs (created_at);`,
  // Why a pending request went. The rule that removes one first writes its outcome on the row
  // (`approved` with the level and expiry granted, `denied`, `withdrawn`, or `removed` when its
  // requester was blocked or deleted), in the same transaction; the delete trigger copies it into
  // the outbox row, so the Directory can tell the requester. Requests already pending are queued
  // once more, so the Directory learns when they were made (its owners' inbox orders by it).
  `ALTER TABLE access_requests ADD COLUMN outcome TEXT;
   ALTER TABLE access_requests ADD COLUMN granted_level INTEGER;
   ALTER TABLE access_requests ADD COLUMN granted_expires_at TEXT;
   ALTER TABLE access_requests ADD COLUMN decided_by INTEGER;
   ALTER TABLE access_requests ADD COLUMN decided_at TEXT;
   ALTER TABLE outbox ADD COLUMN outcome TEXT;
   ALTER TABLE outbox ADD COLUMN granted_level INTEGER;
   ALTER TABLE outbox ADD COLUMN decided_at TEXT;
   DROP TRIGGER requests_removed;
   CREATE TRIGGER requests_removed AFTER DELETE ON access_requests BEGIN
     UPDATE meta SET requests = requests - 1, version = version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at, created_by, expires_at, outcome, granted_level, decided_at)
       SELECT version, 'request', OLD.user_id, 0, OLD.requested_at, OLD.decided_by, OLD.granted_expires_at,
              COALESCE(OLD.outcome, 'removed'), OLD.granted_level, OLD.decided_at FROM meta;
   END;
   INSERT INTO outbox (version, entry, user_id, access_level, created_at)
     SELECT (SELECT version FROM meta) + ROW_NUMBER() OVER (ORDER BY seq), 'request', user_id, 1, requested_at FROM access_requests;
   UPDATE meta SET version = version + (SELECT COUNT(*) FROM access_requests);`,
  // The membership, requester and inbox indexes moved from the Directory to the partition of this
  // group's or project's tree (index-partition.ts). `tree_ids`: its ancestors, nearest first (the
  // root last), once known; `source_pushed`: the registry version of the copy the partition last
  // took; `index_deleted`: the partition has dropped this deleted group's or project's rows.
  `ALTER TABLE meta ADD COLUMN tree_ids TEXT;
   ALTER TABLE meta ADD COLUMN source_pushed INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE meta ADD COLUMN index_deleted INTEGER NOT NULL DEFAULT 0;`,
];
