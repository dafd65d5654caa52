import { levelsAllowedToApprove, type NamespaceKind } from '../../../shared/access-levels';
import type { AccessAlert, InboxAccessRequest, OwnAccessRequest, SourceType } from '../../../shared/api-types';
import type { AccessAlertRow } from '../../durable/index-partition/alerts';
import type { OwnRequestRow } from '../../durable/index-partition/inbox-index';
import type { InboxItem } from '../../durable/user/inbox';
import { askOfDetails, presentAccessRequest } from './member';

export { AccessAlertSchema, InboxAccessRequestSchema, OwnAccessRequestSchema } from '../../../shared/schemas';

/** GitLab's `source_type`: a group is a `Namespace`. */
const SOURCE_TYPE: Record<NamespaceKind, SourceType> = { group: 'Namespace', project: 'Project' };
export const KIND_OF_SOURCE_TYPE: Record<SourceType, NamespaceKind> = { Namespace: 'group', Project: 'project' };

const sourceOf = (kind: NamespaceKind, id: number, fullPath: string, name: string) => ({
  source_type: SOURCE_TYPE[kind],
  source_id: id,
  source_full_path: fullPath,
  source_name: name,
});

/** A request in the owners' inbox: the access request, its source, and the highest level the reader may grant there. */
export const presentInboxItem = (r: InboxItem, origin: string): InboxAccessRequest => ({
  ...presentAccessRequest(askOfDetails(r.requested_at, r.details), { id: r.user_id, username: r.username, name: r.name, state: r.state }, origin),
  ...sourceOf(r.kind, r.namespace_id, r.source_full_path, r.source_name),
  max_access_level: levelsAllowedToApprove(r.kind, r.access_level).at(-1)?.value ?? 0,
});

/**
 * One of the caller's own requests: its status, who decided and when, what was asked and why,
 * and a denial's reason. An approval whose membership has reached its end (00:00 UTC of a date, or
 * the minute of a date-time; both compare as text with `now`) reads `expired`; a request that
 * expired undecided reads `lapsed`.
 */
export const presentOwnRequest = (r: OwnRequestRow, now: string): OwnAccessRequest => {
  const granted = r.pending === 0 && r.outcome === 'approved';
  const status = r.pending === 1 || r.outcome === null ? 'pending' : granted && r.expires_at !== null && r.expires_at <= now ? 'expired' : r.outcome;
  const details = (r.details ? JSON.parse(r.details) : {}) as { decided_reason?: string | null };
  const ask = askOfDetails(r.requested_at, r.details);
  return {
    ...sourceOf(r.kind, r.namespace_id, r.source_full_path, r.source_name),
    requested_at: r.requested_at,
    status,
    access_level: granted ? r.access_level : null,
    expires_at: granted ? r.expires_at : null,
    decided_at: r.pending === 1 ? null : r.decided_at,
    decided_by: r.pending === 1 ? null : r.decided_by,
    reason: ask.reason,
    denial_reason: r.outcome === 'denied' ? (details.decided_reason ?? null) : null,
    requested_access_level: ask.access_level,
    requested_expires_at: ask.expires_at,
  };
};

/** A manager's alert: its group or project, whom it is about, the level and end, and why (break-glass). */
export const presentAccessAlert = (r: AccessAlertRow): AccessAlert => ({
  ...sourceOf(r.kind, r.namespace_id, r.source_full_path, r.source_name),
  action: r.action,
  user: { id: r.user_id, username: r.username, name: r.name },
  access_level: r.access_level,
  expires_at: r.expires_at,
  at: r.at,
  reason: r.reason,
});
