import { z } from '@hono/zod-openapi';
import type { UserRow } from '../../durable/directory';
import type { AccessRequestRow } from '../../durable/namespace';

type UserFields = Pick<UserRow, 'id' | 'username' | 'name' | 'state'>;

const userFields = (u: UserFields, origin: string) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  avatar_url: null,
  web_url: `${origin}/${encodeURIComponent(u.username)}`,
});

const UserFieldsSchema = {
  id: z.number().int(),
  username: z.string(),
  name: z.string(),
  state: z.string(),
  avatar_url: z.string().nullable(),
  web_url: z.string(),
};

export const AccessRequestSchema = z
  .object({ ...UserFieldsSchema, created_at: z.string(), requested_at: z.string() })
  .openapi('AccessRequest');

const CreatedBySchema = z.object({ id: z.number().int(), username: z.string(), name: z.string() });

export const MemberSchema = z
  .object({
    ...UserFieldsSchema,
    access_level: z.number().int(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    created_by: CreatedBySchema.optional(),
  })
  .openapi('Member');

export const ApprovedAccessRequestSchema = MemberSchema.extend({ created_by: CreatedBySchema }).openapi('ApprovedAccessRequest');

/** A pending request (contract §3): the requester, and when they asked. */
export const presentAccessRequest = (r: AccessRequestRow, u: UserFields, origin: string) => ({
  ...userFields(u, origin),
  created_at: r.requested_at,
  requested_at: r.requested_at,
});

export interface MemberFields {
  access_level: number;
  created_at: string;
  expires_at: string | null;
}

/** A member, in GitLab's shape; `created_by` is who added them, when someone did. */
export const presentMember = (m: MemberFields, u: UserFields, createdBy: UserFields | null, origin: string) => ({
  ...userFields(u, origin),
  access_level: m.access_level,
  created_at: m.created_at,
  expires_at: m.expires_at,
  ...(createdBy ? { created_by: { id: createdBy.id, username: createdBy.username, name: createdBy.name } } : {}),
});
