import { accessLevelName } from '../../../shared/access-levels';
import type { AuditEvent } from '../../../shared/api-types';
import type { LoggedEvent } from '../../durable/event-log';
import type { EventAction, EventRecord, UserRef } from '../../events/event';

export { AuditEventSchema } from '../../../shared/schemas';

type Details = AuditEvent['details'];

/** GitLab's audit event type names where it has one for the change, Knock's own where not. */
const EVENT_NAMES: Readonly<Record<EventAction, string>> = {
  requested: 'access_request_created',
  approval: 'access_request_approval_added',
  withdrawn: 'access_request_withdrawn',
  denied: 'access_request_denied',
  discarded: 'access_request_discarded',
  request_expired: 'access_request_expired',
  approved: 'access_request_approved',
  auto_approved: 'access_request_auto_approved',
  break_glass: 'access_break_glass',
  added: 'member_created',
  updated: 'member_updated',
  expiring: 'member_expiring',
  removed: 'member_destroyed',
  expired: 'member_expired',
  settings_changed: 'settings_updated',
  hook_created: 'webhook_created',
  hook_updated: 'webhook_updated',
  hook_deleted: 'webhook_destroyed',
};

/** What Knock itself did (an expiry) has no author: GitLab's convention of id -1. */
const SYSTEM_AUTHOR_ID = -1;
const SYSTEM_AUTHOR_NAME = 'System';

const nameOf = (u: UserRef): string => u.name ?? u.username ?? `User ${u.id}`;
const level = (value: number | null | undefined) => (value === null || value === undefined ? undefined : accessLevelName(value));

/** What the event is about: a user, the group or project itself, or one of its hooks. */
const targetOf = (e: EventRecord): Pick<Details, 'target_id' | 'target_type' | 'target_details'> => {
  const label = e.entity.kind === 'group' ? 'Group' : 'Project';
  if (e.hook) return { target_id: e.hook.id, target_type: `${label}Hook`, target_details: e.hook.url };
  if (e.user) return { target_id: e.user.id, target_type: 'User', target_details: nameOf(e.user) };
  return { target_id: e.entity.id, target_type: label, target_details: e.entity.full_path };
};

/** The change in GitLab's audit vocabulary (`for_member`, `for_changes`, custom messages). */
const changeOf = (e: EventRecord): Partial<Details> => {
  switch (e.action) {
    case 'requested':
      return { custom_message: 'Requested access', as: level(e.access_level), expiry_to: e.expires_at };
    case 'approval':
      return { custom_message: `Approved the access request (${e.approvals?.length ?? 0} of ${e.approvals_required ?? 1})` };
    case 'withdrawn':
      return { custom_message: 'Withdrew the access request' };
    case 'denied':
      return { custom_message: 'Denied the access request' };
    case 'discarded':
      return { custom_message: 'Removed the access request of a blocked or deleted user' };
    case 'request_expired':
      return { custom_message: 'The access request expired undecided' };
    case 'auto_approved':
      return { add: 'user_access', as: level(e.access_level), expiry_to: e.expires_at, custom_message: 'Approved by an auto-approve rule' };
    case 'break_glass':
      return { add: 'user_access', as: level(e.access_level), expiry_to: e.expires_at, custom_message: 'Break-glass access' };
    case 'expiring':
      return { custom_message: 'Membership ends soon', expiry_to: e.expires_at };
    case 'approved':
    case 'added':
      return { add: 'user_access', as: level(e.access_level), expiry_to: e.expires_at };
    case 'updated':
      return {
        change: 'access_level',
        from: level(e.previous?.access_level),
        to: level(e.access_level),
        expiry_from: e.previous?.expires_at ?? null,
        expiry_to: e.expires_at,
      };
    case 'removed':
      return { remove: 'user_access' };
    case 'expired':
      return { remove: 'user_access', custom_message: 'Membership expired' };
    case 'settings_changed':
      return e.change ? { change: e.change.attribute, from: String(e.change.from ?? ''), to: String(e.change.to ?? '') } : {};
    case 'hook_created':
      return { add: 'hook' };
    case 'hook_updated':
      return { custom_message: 'Webhook updated' };
    case 'hook_deleted':
      return { remove: 'hook' };
  }
};

/** An event as GitLab's audit events API shows it; `id` is the same in every log. */
export const presentAuditEvent = ({ record: e }: LoggedEvent): AuditEvent => ({
  id: e.id,
  author_id: e.author?.id ?? SYSTEM_AUTHOR_ID,
  entity_id: e.entity.id,
  entity_type: e.entity.kind === 'group' ? 'Group' : 'Project',
  event_name: EVENT_NAMES[e.action],
  details: {
    author_name: e.author ? nameOf(e.author) : SYSTEM_AUTHOR_NAME,
    ...targetOf(e),
    entity_path: e.entity.full_path,
    ...changeOf(e),
    action: e.action,
    ...(e.reason ? { reason: e.reason } : {}),
    event_id: e.uuid,
  },
  created_at: e.created_at,
});
