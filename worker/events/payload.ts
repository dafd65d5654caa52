import { accessLevelName, DEFAULT_APPROVAL_LEVEL, type NamespaceKind } from '../../shared/access-levels';
import type { EventDraft, MemberAction, RequestAction, UserRef } from './event';

/**
 * The body a webhook receives: GitLab's member hook payloads (lib/gitlab/hook_data/
 * group_member_builder.rb and project_member_builder.rb, with the system hooks' event names),
 * plus what GitLab leaves out: `action` (a denial, a withdrawal and an expiry are told apart),
 * `actor`, who made the change (null when Knock or a rule did), `reason` (the requester's, or a
 * denial's), and for a request that needs several approvals, `approvals` and `approvals_required`.
 * `user_access_expiring_for_group` / `_for_team` is Knock's own: GitLab sends no event before a
 * membership ends.
 */

type GitlabEvent = 'request' | 'revoke' | 'create' | 'update' | 'expiring' | 'destroy';

/** GitLab's event names, which differ by kind (a project's members are its "team"). */
const EVENT_NAMES: Readonly<Record<NamespaceKind, Record<GitlabEvent, string>>> = {
  group: {
    request: 'user_access_request_to_group',
    revoke: 'user_access_request_revoked_for_group',
    create: 'user_add_to_group',
    update: 'user_update_for_group',
    expiring: 'user_access_expiring_for_group',
    destroy: 'user_remove_from_group',
  },
  project: {
    request: 'user_access_request_to_project',
    revoke: 'user_access_request_revoked_for_project',
    create: 'user_add_to_team',
    update: 'user_update_for_team',
    expiring: 'user_access_expiring_for_team',
    destroy: 'user_remove_from_team',
  },
};

const GITLAB_EVENTS: Readonly<Record<RequestAction | MemberAction, GitlabEvent>> = {
  requested: 'request',
  approval: 'request',
  withdrawn: 'revoke',
  denied: 'revoke',
  discarded: 'revoke',
  request_expired: 'revoke',
  approved: 'create',
  auto_approved: 'create',
  break_glass: 'create',
  added: 'create',
  updated: 'update',
  expiring: 'expiring',
  removed: 'destroy',
  expired: 'destroy',
};

/** Whether an event is delivered to webhooks at all (settings and hook changes are audit-only). */
const isHookEvent = (action: EventDraft['action']): action is RequestAction | MemberAction => action in GITLAB_EVENTS;

const hookEventName = (e: EventDraft): string | null => (isHookEvent(e.action) ? EVENT_NAMES[e.entity.kind][GITLAB_EVENTS[e.action]] : null);

/** GitLab's webhook timestamps: ISO 8601 to the second (Ruby's `xmlschema`). */
const xmlschema = (iso: string): string => iso.replace(/\.\d+Z$/, 'Z');

/** GitLab sends `webhook_email`, the public email; Knock has none public. */
const WEBHOOK_EMAIL = '[REDACTED]';

const actorOf = (u: UserRef | null) => (u ? { id: u.id, username: u.username, name: u.name } : null);

export const hookPayload = (e: EventDraft): Record<string, unknown> | null => {
  const eventName = hookEventName(e);
  if (!eventName) return null;
  const user = e.user ?? { id: 0, username: null, name: null };
  // A request has no level yet; GitLab reports the level it would be approved at.
  const level = accessLevelName(e.access_level ?? DEFAULT_APPROVAL_LEVEL);
  const expiresAt = e.expires_at === null ? null : e.expires_at.length > 10 ? xmlschema(e.expires_at) : `${e.expires_at}T00:00:00Z`;
  const common = {
    created_at: xmlschema(e.since ?? e.created_at),
    updated_at: xmlschema(e.created_at),
  };
  const who = { user_username: user.username, user_name: user.name, user_email: WEBHOOK_EMAIL, user_id: user.id };
  const knock = {
    action: e.action,
    actor: actorOf(e.author),
    reason: e.reason ?? null,
    ...(e.approvals_required ? { approvals_required: e.approvals_required, approvals: e.approvals ?? [] } : {}),
  };
  if (e.entity.kind === 'group') {
    return {
      ...common,
      group_name: e.entity.name,
      group_path: e.entity.full_path.split('/').pop(),
      group_full_path: e.entity.full_path,
      group_id: e.entity.id,
      ...who,
      group_access: level,
      group_plan: null,
      expires_at: expiresAt,
      event_name: eventName,
      ...knock,
    };
  }
  return {
    ...common,
    project_name: e.entity.name,
    project_path: e.entity.full_path.split('/').pop(),
    project_path_with_namespace: e.entity.full_path,
    project_id: e.entity.id,
    ...who,
    access_level: level,
    project_visibility: e.entity.visibility,
    expires_at: expiresAt,
    event_name: eventName,
    ...knock,
  };
};
