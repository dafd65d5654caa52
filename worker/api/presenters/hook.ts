import type { GroupHook, HookEvent, ProjectHook } from '../../../shared/api-types';
import { clock } from '../../clock';
import type { HookLogRow, HookRow } from '../../durable/namespace/webhooks';
import { alertStatus } from '../../events/auto-disable';

export { GroupHookSchema, HookEventSchema, NewGroupHookSchema, NewProjectHookSchema, ProjectHookSchema } from '../../../shared/schemas';

/** A hook as GitLab's hooks API shows it: never its secret token nor its signing secret. */
const hookFields = (h: HookRow) => ({
  id: h.id,
  url: h.url,
  name: h.name,
  description: h.description,
  created_at: h.created_at,
  member_events: h.member_events,
  access_request_events: h.access_request_events,
  enable_ssl_verification: h.enable_ssl_verification,
  alert_status: alertStatus(h, clock.now()),
  disabled_until: h.disabled_until === null ? null : new Date(h.disabled_until).toISOString(),
});

export const presentGroupHook = (groupId: number, h: HookRow): GroupHook => ({ ...hookFields(h), group_id: groupId });
export const presentProjectHook = (projectId: number, h: HookRow): ProjectHook => ({ ...hookFields(h), project_id: projectId });

const parsed = (body: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(body);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** One delivery attempt, as GitLab's hook events API shows it. */
export const presentHookEvent = (l: HookLogRow): HookEvent => ({
  id: l.id,
  url: l.url,
  trigger: l.trigger,
  request_headers: l.request_headers,
  request_data: parsed(l.request_body),
  response_headers: l.response_headers,
  response_body: l.response_body,
  execution_duration: l.duration_ms / 1000,
  // GitLab's words when no response came back.
  response_status: l.response_status === null ? 'internal error' : String(l.response_status),
  event_id: l.event_uuid,
  attempt: l.attempt,
  internal_error_message: l.error,
  created_at: l.created_at,
});
