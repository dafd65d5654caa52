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

/** GitLab's `User`: `email` and `is_admin` only for the user themselves and administrators. */
export const UserSchema = UserBasicSchema.extend({
  created_at: z.string(),
  email: z.string().nullable().optional(),
  is_admin: z.boolean().optional(),
}).openapi('User');

/** A pending access request; `id` is the requester's user id (GitLab's `AccessRequester`). */
export const AccessRequestSchema = UserBasicSchema.extend({
  created_at: z.string(),
  requested_at: z.string(),
}).openapi('AccessRequest');

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
export const OWN_REQUEST_STATUSES = ['pending', 'approved', 'denied', 'withdrawn', 'expired'] as const;

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
  })
  .openapi('OwnAccessRequest');

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

/** RFC 6749 §5.1: the token endpoint's success body. */
export const TokenResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string(),
    scope: z.string(),
    created_at: z.number().int(),
  })
  .openapi('TokenResponse');

/**
 * GitLab's `PersonalAccessToken` and `ImpersonationToken` entities: what lists show of a token.
 * `expires_at` is a date (the token stops at 00:00 UTC that day).
 */
export const AccessTokenSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    revoked: z.boolean(),
    created_at: z.string(),
    scopes: z.array(z.string()),
    user_id: z.number().int(),
    active: z.boolean(),
    expires_at: z.string(),
    impersonation: z.boolean(),
  })
  .openapi('AccessToken');

/** What creating a token answers: the only time the token itself is shown. */
export const NewAccessTokenSchema = AccessTokenSchema.extend({ token: z.string() }).openapi('AccessTokenWithToken');

/** GitLab's `Application` entity: an OAuth client registered on this server. */
export const ApplicationSchema = z
  .object({
    id: z.number().int(),
    application_id: z.string(),
    application_name: z.string(),
    callback_url: z.string(),
    confidential: z.boolean(),
  })
  .openapi('Application');

/** What registering answers: the only time the secret is shown (null for a public client). */
export const NewApplicationResponseSchema = ApplicationSchema.extend({ secret: z.string().nullable() }).openapi('ApplicationWithSecret');
