// The JSON shapes Knock's API answers with, defined once. The Worker validates and documents its
// responses with these schemas (GitLab REST v4 entities: UserBasic, AccessRequester, Member,
// Group, Project); clients derive their types from them with `import type` (see api-types.ts),
// so zod never reaches the extension's bundle.

import { z } from '@hono/zod-openapi';

/** GitLab's visibility levels, least visible first. */
export const VISIBILITIES = ['private', 'internal', 'public'] as const;
export const VisibilitySchema = z.enum(VISIBILITIES);

/** GitLab's user states that Knock uses. */
export const USER_STATES = ['active', 'blocked', 'deactivated'] as const;

/** GitLab's `UserBasic`: the user shape every other entity embeds. */
export const UserBasicSchema = z
  .object({
    id: z.number().int(),
    username: z.string(),
    name: z.string(),
    state: z.string(),
    locked: z.boolean(),
    avatar_url: z.string().nullable(),
    web_url: z.string(),
  })
  .openapi('UserBasic');

/** GitLab's `User`: `email`, `is_admin` and `two_factor_enabled` only for the user themselves and administrators. */
export const UserSchema = UserBasicSchema.extend({
  created_at: z.string(),
  email: z.string().nullable().optional(),
  is_admin: z.boolean().optional(),
  two_factor_enabled: z.boolean().optional(),
}).openapi('User');

/** One manager's approval of a request that needs more than one. */
export const ApprovalSchema = z
  .object({ id: z.number().int(), username: z.string().nullable(), name: z.string().nullable(), approved_at: z.string() })
  .openapi('AccessRequestApproval');

/**
 * A pending access request; `id` is the requester's user id (GitLab's `AccessRequester`), with
 * what they asked (null when not given: `access_level` the level, `expires_at` a date or a
 * date-time to the minute) and the approvals so far of the `approvals_required`.
 */
export const AccessRequestSchema = UserBasicSchema.extend({
  created_at: z.string(),
  requested_at: z.string(),
  reason: z.string().nullable(),
  access_level: z.number().int().nullable(),
  expires_at: z.string().nullable(),
  approvals_required: z.number().int(),
  approvals: z.array(ApprovalSchema),
}).openapi('AccessRequest');

/** An auto-approve entry: each field optional, all given must hold. */
export const AutoApproveRuleSchema = z
  .object({
    email_domain: z.string().optional(),
    member_of: z.string().optional(),
    max_access_level: z.number().int().optional(),
    max_duration_hours: z.number().int().optional(),
  })
  .openapi('AutoApproveRule');

/** A group's or project's access request rules (`…/access_request_rules`). */
export const AccessRequestRulesSchema = z
  .object({
    reason_required: z.boolean(),
    max_duration_hours: z.number().int().nullable(),
    pending_expires_after_days: z.number().int().nullable(),
    approvals_required: z.number().int(),
    auto_approve: z.array(AutoApproveRuleSchema),
    break_glass: z.object({ access_level: z.number().int(), max_duration_hours: z.number().int() }).nullable(),
  })
  .openapi('AccessRequestRules');

/** The rules in force, and the full path of the group they come from when inherited (null: its own, or none). */
export const EffectiveAccessRequestRulesSchema = AccessRequestRulesSchema.extend({ inherited_from: z.string().nullable() }).openapi(
  'EffectiveAccessRequestRules',
);

/** GitLab's `source_type` of a membership: `Namespace` for a group, `Project` for a project. */
export const SOURCE_TYPES = ['Namespace', 'Project'] as const;
export const SourceTypeSchema = z.enum(SOURCE_TYPES);

/** Where a request is, as GitLab's membership entity names a source. */
const SourceFields = {
  source_type: SourceTypeSchema,
  source_id: z.number().int(),
  source_full_path: z.string(),
  source_name: z.string(),
};

/**
 * Knock's owners' inbox (`GET /access_requests`): a pending request with its group or project,
 * and the highest `access_level` the caller may approve it at there.
 */
export const InboxAccessRequestSchema = AccessRequestSchema.extend({
  ...SourceFields,
  max_access_level: z.number().int(),
}).openapi('InboxAccessRequest');

/** What became of one of the caller's own requests (`GET /user/access_requests`). */
export const OWN_REQUEST_STATUSES = ['pending', 'approved', 'denied', 'withdrawn', 'expired', 'lapsed'] as const;

export const OwnAccessRequestSchema = z
  .object({
    ...SourceFields,
    requested_at: z.string(),
    status: z.enum(OWN_REQUEST_STATUSES),
    /** The level an approval granted (approved, expired); else null. */
    access_level: z.number().int().nullable(),
    /** The expiry date an approval gave the membership (`YYYY-MM-DD`), if any. */
    expires_at: z.string().nullable(),
    /** When it was approved, denied or withdrawn; null while pending. */
    decided_at: z.string().nullable(),
    /** Who decided (the approver, the denier; null when a rule or no one did). */
    decided_by: z.number().int().nullable(),
    /** Why, as the requester gave it; the denial's reason. */
    reason: z.string().nullable(),
    denial_reason: z.string().nullable(),
    /** The level and end asked for. */
    requested_access_level: z.number().int().nullable(),
    requested_expires_at: z.string().nullable(),
  })
  .openapi('OwnAccessRequest');

/**
 * Knock's alerts for a manager (`GET /user/access_alerts`): a break-glass grant in a group or
 * project they own, or another member's access there that ends soon (the `expiring` event).
 */
export const AccessAlertSchema = z
  .object({
    ...SourceFields,
    action: z.enum(['break_glass', 'expiring']),
    /** Who was granted access, or whose access ends. */
    user: z.object({ id: z.number().int(), username: z.string().nullable(), name: z.string().nullable() }),
    access_level: z.number().int(),
    /** When the access ends: a date `YYYY-MM-DD`, or a date-time to the minute. */
    expires_at: z.string().nullable(),
    /** When the grant was made, or when the warning began. */
    at: z.string(),
    /** The break-glass reason. */
    reason: z.string().nullable(),
  })
  .openapi('AccessAlert');

export const CreatedBySchema = UserBasicSchema.pick({ id: true, username: true, name: true }).openapi('CreatedBy');

/** GitLab's `Member`: `created_by` is who added them, when someone did. */
export const MemberSchema = UserBasicSchema.extend({
  access_level: z.number().int(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  created_by: CreatedBySchema.optional(),
}).openapi('Member');

/** What approving answers: the new member, with its approver (no `requested_at`). */
export const ApprovedAccessRequestSchema = MemberSchema.extend({ created_by: CreatedBySchema }).openapi('ApprovedAccessRequest');

/** What a request answers when a rule granted it at once (auto-approve, break-glass): the new member. */
export const RuleApprovedAccessRequestSchema = MemberSchema.extend({
  requested_at: z.string(),
  reason: z.string().nullable(),
  approved_by_rule: z.enum(['auto_approve', 'break_glass']),
}).openapi('RuleApprovedAccessRequest');

export const GroupSchema = z
  .object({
    id: z.number().int(),
    web_url: z.string(),
    name: z.string(),
    path: z.string(),
    description: z.string(),
    visibility: VisibilitySchema,
    full_name: z.string(),
    full_path: z.string(),
    parent_id: z.number().int().nullable(),
    request_access_enabled: z.boolean(),
    require_two_factor_authentication: z.boolean(),
    avatar_url: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Group');

export const ProjectSchema = z
  .object({
    id: z.number().int(),
    description: z.string(),
    name: z.string(),
    name_with_namespace: z.string(),
    path: z.string(),
    path_with_namespace: z.string(),
    created_at: z.string(),
    web_url: z.string(),
    avatar_url: z.string().nullable(),
    visibility: VisibilitySchema,
    request_access_enabled: z.boolean(),
    namespace: z.object({
      id: z.number().int(),
      name: z.string(),
      path: z.string(),
      kind: z.enum(['group', 'user']),
      full_path: z.string(),
      parent_id: z.number().int().nullable(),
      avatar_url: z.string().nullable(),
      web_url: z.string(),
    }),
  })
  .openapi('Project');

export const VersionSchema = z.object({ version: z.string(), revision: z.string() }).openapi('Version');

/** RFC 6749 §5.1: the token endpoint's success body; with `openid` granted, OpenID Connect Core 1.0 §3.1.3.3's id_token. */
export const TokenResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string(),
    scope: z.string(),
    created_at: z.number().int(),
    id_token: z.string().optional(),
  })
  .openapi('TokenResponse');

/**
 * GitLab's `PersonalAccessToken` entity: what lists show of a token. `expires_at` is a date (the
 * token stops at 00:00 UTC that day); `last_used_at` is null until the token is first used.
 */
export const PersonalAccessTokenSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    revoked: z.boolean(),
    created_at: z.string(),
    scopes: z.array(z.string()),
    user_id: z.number().int(),
    last_used_at: z.string().nullable(),
    active: z.boolean(),
    expires_at: z.string(),
  })
  .openapi('PersonalAccessToken');

/** What creating a personal access token answers: the only time the token itself is shown. */
export const PersonalAccessTokenWithTokenSchema = PersonalAccessTokenSchema.extend({ token: z.string() }).openapi('PersonalAccessTokenWithToken');

/** GitLab's `ImpersonationToken` entity: a personal access token that says it is an impersonation token. */
export const ImpersonationTokenSchema = PersonalAccessTokenSchema.extend({ impersonation: z.boolean() }).openapi('ImpersonationToken');

/** What creating an impersonation token answers: the only time the token itself is shown. */
export const ImpersonationTokenWithTokenSchema = ImpersonationTokenSchema.extend({ token: z.string() }).openapi('ImpersonationTokenWithToken');

/** GitLab's `Application` entity: an OAuth client registered on this server. */
export const ApplicationSchema = z
  .object({
    id: z.number().int(),
    application_id: z.string(),
    application_name: z.string(),
    callback_url: z.string(),
    confidential: z.boolean(),
    /** OpenID Connect Back-Channel Logout 1.0 §2.2 (Knock's; GitLab has none). */
    backchannel_logout_uri: z.string().nullable(),
    /** OpenID Connect RP-Initiated Logout 1.0 §3.1 (Knock's; GitLab has none). */
    post_logout_redirect_uris: z.array(z.string()),
  })
  .openapi('Application');

/**
 * One attempt to deliver a back-channel logout token to an application (OpenID Connect
 * Back-Channel Logout 1.0 §2.5; Knock's, GitLab has none): whose session, why, and what came back.
 */
export const LogoutDeliverySchema = z
  .object({
    id: z.number().int(),
    jti: z.string(),
    user_id: z.number().int(),
    sid: z.string().nullable(),
    reason: z.string(),
    url: z.string(),
    attempt: z.number().int(),
    response_status: z.number().int().nullable(),
    response_body: z.string(),
    error: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('LogoutDelivery');

/** What registering answers: the only time the secret is shown (null for a public client). */
export const NewApplicationResponseSchema = ApplicationSchema.extend({ secret: z.string().nullable() }).openapi('ApplicationWithSecret');

/**
 * The `details` of an audit event (GitLab's audit events API): who and what, and the change in
 * GitLab's words (`add`/`as` for a new member, `change`/`from`/`to`, `remove`, or a
 * `custom_message`), plus Knock's `action` and `event_id` (the event's `webhook-id`).
 */
export const AuditEventDetailsSchema = z
  .object({
    author_name: z.string(),
    target_id: z.union([z.number().int(), z.string()]),
    target_type: z.string(),
    target_details: z.string(),
    entity_path: z.string(),
    custom_message: z.string().optional(),
    add: z.string().optional(),
    as: z.string().optional(),
    change: z.string().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    remove: z.string().optional(),
    expiry_from: z.string().nullable().optional(),
    expiry_to: z.string().nullable().optional(),
    action: z.string(),
    /** The requester's reason, or a denial's. */
    reason: z.string().optional(),
    event_id: z.string(),
  })
  .openapi('AuditEventDetails');

/** GitLab's `AuditEvent`; `author_id` is -1 for what Knock itself did (an expiry). */
export const AuditEventSchema = z
  .object({
    id: z.number().int(),
    author_id: z.number().int(),
    entity_id: z.number().int(),
    entity_type: z.enum(['Group', 'Project']),
    event_name: z.string(),
    details: AuditEventDetailsSchema,
    created_at: z.string(),
  })
  .openapi('AuditEvent');

const hookFields = {
  id: z.number().int(),
  url: z.string(),
  name: z.string(),
  description: z.string(),
  created_at: z.string(),
  member_events: z.boolean(),
  /** Knock: access requests made, withdrawn, denied (GitLab sends these with member events). */
  access_request_events: z.boolean(),
  enable_ssl_verification: z.boolean(),
  alert_status: z.enum(['executable', 'temporarily_disabled', 'disabled']),
  disabled_until: z.string().nullable(),
};

/** GitLab's group hook (`GroupHook`), with the fields Knock has. */
export const GroupHookSchema = z.object({ ...hookFields, group_id: z.number().int() }).openapi('GroupHook');
/** GitLab's project hook (`ProjectHook`), with the fields Knock has. */
export const ProjectHookSchema = z.object({ ...hookFields, project_id: z.number().int() }).openapi('ProjectHook');

/** What creating a hook answers: the only time its Standard Webhooks signing secret is shown. */
export const NewGroupHookSchema = GroupHookSchema.extend({ signing_token: z.string() }).openapi('GroupHookWithSigningToken');
export const NewProjectHookSchema = ProjectHookSchema.extend({ signing_token: z.string() }).openapi('ProjectHookWithSigningToken');

/**
 * One delivery attempt (GitLab's `WebHookLog`, "hook events"): the request as sent (the secret
 * token redacted), the response's status, headers and first 2 KB, and the duration in seconds;
 * Knock adds the event's id, the attempt number, and why it failed.
 */
export const HookEventSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    trigger: z.string(),
    request_headers: z.record(z.string(), z.string()),
    request_data: z.record(z.string(), z.unknown()),
    response_headers: z.record(z.string(), z.string()),
    response_body: z.string(),
    execution_duration: z.number(),
    response_status: z.string(),
    event_id: z.string(),
    attempt: z.number().int(),
    internal_error_message: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('HookEvent');

/** What resending a hook event answers (GitLab's shape): the new attempt's status, null if none came. */
export const HookResendSchema = z.object({ response_status: z.number().int().nullable() }).openapi('HookResend');
