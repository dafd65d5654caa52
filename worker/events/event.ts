import type { NamespaceKind } from '../../shared/access-levels';
import type { Visibility } from '../../shared/api-types';
import { isoNow } from '../clock';

/**
 * One change to who may access a group or project, as recorded in the same transaction as the
 * change itself: the audit log shows it and webhooks deliver it. Plain data (stored as JSON,
 * copied to every ancestor group's log and to the instance log), identified by `uuid`, which is
 * also the delivery's `webhook-id`, `Idempotency-Key` and `X-Gitlab-Event-UUID`.
 */

/**
 * A pending access request appeared, was approved by one of several managers (`approval`), or
 * went away undecided (`request_expired`: its rules' `pending_expires_after_days` passed).
 */
export const REQUEST_ACTIONS = ['requested', 'approval', 'withdrawn', 'denied', 'discarded', 'request_expired'] as const;
/**
 * A membership began, changed, is about to end (`expiring`) or ended. `approved`,
 * `auto_approved` (by an auto-approve rule) and `break_glass` also end a request (member events
 * all the same).
 */
export const MEMBER_ACTIONS = ['approved', 'auto_approved', 'break_glass', 'added', 'updated', 'expiring', 'removed', 'expired'] as const;
/** Recorded in the audit log only. */
export const SETTINGS_ACTIONS = ['settings_changed', 'hook_created', 'hook_updated', 'hook_deleted'] as const;

export type RequestAction = (typeof REQUEST_ACTIONS)[number];
export type MemberAction = (typeof MEMBER_ACTIONS)[number];
export type EventAction = RequestAction | MemberAction | (typeof SETTINGS_ACTIONS)[number];

/** A user as the event saw them; names may be filled in later (see `EventLog.withNames`). */
export interface UserRef {
  id: number;
  username: string | null;
  name: string | null;
}

/** The group or project the change happened in, as it was then. */
export interface EventEntity {
  id: number;
  kind: NamespaceKind;
  full_path: string;
  name: string;
  visibility: Visibility;
}

export interface EventRecord {
  /** Its audit event id, the same in every log (see `eventId`). */
  id: number;
  uuid: string;
  action: EventAction;
  created_at: string;
  entity: EventEntity;
  /** Who made the change; null when Knock did (an expiry, the requests of a removed user). */
  author: UserRef | null;
  /** The user a request or membership event is about. */
  user: UserRef | null;
  /** The membership's level and end date after the change (the request's default level before). */
  access_level: number | null;
  expires_at: string | null;
  /** When the request was made or the membership began. */
  since: string | null;
  /** The membership before an update. */
  previous: { access_level: number; expires_at: string | null } | null;
  /** `settings_changed`: one attribute of the group or project. */
  change: { attribute: string; from: string | boolean | null; to: string | boolean | null } | null;
  /** `hook_*`: the hook, its URL without credentials or query. */
  hook: { id: number; url: string } | null;
  /** The requester's reason (a request, its approval, break-glass), or a denial's. */
  reason?: string | null;
  /** The approvals counted (`approval`, and `approved` when more than one was required). */
  approvals?: { id: number; username: string | null; name: string | null; approved_at: string }[] | null;
  /** How many approvals the request needs. */
  approvals_required?: number | null;
}

/** An event before the object of its group or project has numbered it (see `eventId`). */
export type EventDraft = Omit<EventRecord, 'id'>;

export type NewEvent = Pick<EventRecord, 'action' | 'author'> & Partial<Omit<EventRecord, 'id' | 'uuid' | 'created_at' | 'entity' | 'action' | 'author'>>;

export const newEvent = (entity: EventEntity, input: NewEvent): EventDraft => ({
  uuid: crypto.randomUUID(),
  created_at: isoNow(),
  entity,
  user: null,
  access_level: null,
  expires_at: null,
  since: null,
  previous: null,
  change: null,
  hook: null,
  ...input,
});

/**
 * An audit event's id, the same in every log that keeps a copy of it, as GitLab's audit events
 * have one id: given once, by the object of the group or project where the change happened, to
 * its `n`-th event, and carried by every copy. The two numbers are paired into one (Szudzik's
 * pairing), so ids are unique across the instance, grow with `n` within one group or project, and
 * name the group or project again (`namespaceOfEvent`), hence the part of the instance log that
 * keeps it. Both numbers stay below 94 million (2^26.5) for the id to be a safe integer.
 */
export const eventId = (namespaceId: number, n: number): number =>
  namespaceId >= n ? namespaceId * namespaceId + namespaceId + n : n * n + namespaceId;

/** The group or project an event id was given by (the inverse of `eventId`). */
export const namespaceOfEvent = (id: number): number => {
  let root = Math.floor(Math.sqrt(id));
  while (root * root > id) root--;
  while ((root + 1) * (root + 1) <= id) root++;
  const rest = id - root * root;
  return rest < root ? rest : root;
};

/** A hook's setting that subscribes it to a kind of event. */
export type HookTrigger = 'member_events' | 'access_request_events';

/**
 * The one setting that subscribes a hook to an event, as docs/webhooks.md lists them:
 * `member_events` for a membership that begins (an approval too: GitLab's member events fire when
 * a user is added, "Member events" in its webhook events docs), changes or ends;
 * `access_request_events` for a request made, withdrawn, denied or discarded. Settings and hook
 * changes go to the audit log only.
 */
export const triggerOf = (action: EventAction): HookTrigger | null => {
  if ((MEMBER_ACTIONS as readonly string[]).includes(action)) return 'member_events';
  if ((REQUEST_ACTIONS as readonly string[]).includes(action)) return 'access_request_events';
  return null;
};

/** A URL as an audit log may show it: no credentials, no query (either may carry a secret). */
export const redactedUrl = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '';
  }
};
