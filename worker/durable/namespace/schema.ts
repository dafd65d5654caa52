import { EVENTS_TABLE } from '../event-log-schema';

/**
 * The tables of one group's or project's Durable Object, as one baseline: nothing has been
 * released, so there is no earlier state to upgrade. A later release appends a step to this list
 * and never edits one that shipped (docs/deploy.md, "Changing a schema").
 *
 * - `meta`: which group or project this is, and what it judges by: its settings (visibility,
 *   request_access_enabled), the full path and name it is known by (events carry them), each with
 *   the Directory's version of the registry row (`registry_version`), so an older write never
 *   wins; `deleted` once it is gone. `ancestor_ids`: its ancestor groups, once known (events are
 *   copied to their logs). `tree_ids`: its ancestors, nearest first (the root last), once known
 *   (its tree's index partition); `source_pushed`: the registry version of the copy that partition
 *   last took; `index_deleted`: the partition has dropped this deleted group's or project's rows.
 * - `access_requests`: the requester's username and name are copied in when the request is made,
 *   so this object alone answers a page of requests; `requester_version` is the version of the
 *   users row they come from (0: as the token record had them), so a rename is applied only over
 *   older names. The rule that removes a request first writes why on the row (`approved` with the
 *   level and expiry granted, `denied`, `withdrawn`; none: `removed`, when its requester was
 *   blocked or deleted), in the same transaction.
 * - `access_requests` also keep what the requester asked (`reason`, `access_level`, `expires_at`)
 *   and what the rules in force when they asked decide for it (`approvals_required`,
 *   `max_duration_hours`, `pending_until`: when it expires undecided); a denial's reason is
 *   `decided_reason`, and which rule granted it (`approved_by_rule`: auto_approve, break_glass). `approvals` holds the approvals counted so far (deleted with the request).
 * - `meta.rules`: this group's or project's own access request rules (JSON), null when it
 *   inherits them.
 * - Members end at `expires_at`: 00:00 UTC of a date, or the minute of a date-time
 *   (`YYYY-MM-DDTHH:MM:00.000Z`); the alarm removes them. `expiry_warnings` records the end a member
 *   was warned of (the `expiring` event), so a new end warns again.
 * - `hooks` hold their secret token and signing secret sealed (worker/auth/secret-box.ts), and
 *   GitLab's failure count and rest; `deliveries` is the queue of (hook, event) still to send, due
 *   at `next_attempt_at` (epoch ms); `hook_logs` records every attempt for seven days.
 *
 * Triggers keep the bookkeeping in the database itself, so no code path can forget it:
 * - every change to `members` or `access_requests` bumps `meta.version` and writes an `outbox` row
 *   carrying that version, in the same transaction as the change: `entry = 'member'` with the
 *   level (0 for a removal) and expiry, or `entry = 'request'` (level 1 pending, 0 gone, with the
 *   outcome copied from the row, and `details`: what was asked, the approvals so far, the denial's
 *   reason, as JSON). An approval that is not the last writes a pending `request` row too. The outbox is what gets pushed to the tree's index partition;
 * - `meta.members` and `meta.requests` count the rows, so a page's `X-Total` costs one row read;
 * - `meta.page_version` changes with every insert, update or delete of a pending request or of an
 *   approval, so a page of requests this object read before is answered again only while it is
 *   the same (`requestPage` in core.ts).
 */
export const NAMESPACE_SCHEMA = [
  `CREATE TABLE meta (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     namespace_id INTEGER NOT NULL,
     kind TEXT NOT NULL,
     version INTEGER NOT NULL DEFAULT 0,
     members INTEGER NOT NULL DEFAULT 0,
     requests INTEGER NOT NULL DEFAULT 0,
     page_version INTEGER NOT NULL DEFAULT 0,
     visibility TEXT,
     request_access_enabled INTEGER,
     full_path TEXT,
     name TEXT,
     registry_version INTEGER NOT NULL DEFAULT 0,
     deleted INTEGER NOT NULL DEFAULT 0,
     ancestor_ids TEXT,
     events_numbered INTEGER NOT NULL DEFAULT 0,
     tree_ids TEXT,
     source_pushed INTEGER NOT NULL DEFAULT 0,
     index_deleted INTEGER NOT NULL DEFAULT 0,
     rules TEXT
   );
   CREATE TABLE members (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL UNIQUE,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER,
     expires_at TEXT
   );
   CREATE INDEX members_expiry ON members (expires_at) WHERE expires_at IS NOT NULL;
   CREATE TABLE access_requests (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id INTEGER NOT NULL UNIQUE,
     requested_at TEXT NOT NULL,
     username TEXT NOT NULL,
     name TEXT NOT NULL,
     requester_version INTEGER NOT NULL DEFAULT 0,
     outcome TEXT,
     granted_level INTEGER,
     granted_expires_at TEXT,
     decided_by INTEGER,
     decided_at TEXT,
     reason TEXT,
     access_level INTEGER,
     expires_at TEXT,
     approvals_required INTEGER NOT NULL DEFAULT 1,
     max_duration_hours INTEGER,
     pending_until TEXT,
     decided_reason TEXT,
     approved_by_rule TEXT
   );
   CREATE INDEX access_requests_pending_until ON access_requests (pending_until) WHERE pending_until IS NOT NULL;
   CREATE TABLE approvals (
     user_id INTEGER NOT NULL,
     approver_id INTEGER NOT NULL,
     username TEXT,
     name TEXT,
     approved_at TEXT NOT NULL,
     PRIMARY KEY (user_id, approver_id)
   ) WITHOUT ROWID;
   CREATE TABLE expiry_warnings (
     user_id INTEGER PRIMARY KEY,
     expires_at TEXT NOT NULL
   );
   CREATE TABLE outbox (
     version INTEGER PRIMARY KEY,
     entry TEXT NOT NULL DEFAULT 'member',
     user_id INTEGER NOT NULL,
     access_level INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     created_by INTEGER,
     expires_at TEXT,
     outcome TEXT,
     granted_level INTEGER,
     decided_at TEXT,
     details TEXT
   );
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
     UPDATE meta SET requests = requests + 1, version = version + 1, page_version = page_version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at, details)
       SELECT version, 'request', NEW.user_id, 1, NEW.requested_at,
              json_object('reason', NEW.reason, 'access_level', NEW.access_level, 'expires_at', NEW.expires_at,
                          'approvals_required', NEW.approvals_required, 'approvals', json('[]')) FROM meta;
   END;
   CREATE TRIGGER approvals_added AFTER INSERT ON approvals BEGIN
     UPDATE meta SET version = version + 1, page_version = page_version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at, details)
       SELECT m.version, 'request', r.user_id, 1, r.requested_at,
              json_object('reason', r.reason, 'access_level', r.access_level, 'expires_at', r.expires_at,
                          'approvals_required', r.approvals_required,
                          'approvals', (SELECT json_group_array(json_object('id', a.approver_id, 'username', a.username, 'name', a.name, 'approved_at', a.approved_at))
                                        FROM approvals a WHERE a.user_id = r.user_id))
       FROM meta m, access_requests r WHERE r.user_id = NEW.user_id;
   END;
   CREATE TRIGGER requests_changed AFTER UPDATE ON access_requests BEGIN
     UPDATE meta SET page_version = page_version + 1;
   END;
   CREATE TRIGGER approvals_removed AFTER DELETE ON approvals BEGIN
     UPDATE meta SET page_version = page_version + 1;
   END;
   CREATE TRIGGER requests_removed AFTER DELETE ON access_requests BEGIN
     UPDATE meta SET requests = requests - 1, version = version + 1, page_version = page_version + 1;
     INSERT INTO outbox (version, entry, user_id, access_level, created_at, created_by, expires_at, outcome, granted_level, decided_at, details)
       SELECT version, 'request', OLD.user_id, 0, OLD.requested_at, OLD.decided_by, OLD.granted_expires_at,
              COALESCE(OLD.outcome, 'removed'), OLD.granted_level, OLD.decided_at,
              json_object('reason', OLD.reason, 'access_level', OLD.access_level, 'expires_at', OLD.expires_at,
                          'approvals_required', OLD.approvals_required, 'decided_reason', OLD.decided_reason,
                          'approved_by_rule', OLD.approved_by_rule) FROM meta;
     DELETE FROM approvals WHERE user_id = OLD.user_id;
   END;
   CREATE TRIGGER members_gone_warnings AFTER DELETE ON members BEGIN
     DELETE FROM expiry_warnings WHERE user_id = OLD.user_id;
   END;
   ${EVENTS_TABLE}
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
     created_at TEXT NOT NULL,
     -- Edits so far: an attempt's outcome counts for the hook only if no edit came after it began.
     edits INTEGER NOT NULL DEFAULT 0
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
];
