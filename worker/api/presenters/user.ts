import { z } from '@hono/zod-openapi';
import type { UserRow } from '../../durable/directory';

export const UserBasic = z
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

export const UserDetail = UserBasic.extend({
  created_at: z.string(),
  email: z.string().nullable().optional(),
  is_admin: z.boolean().optional(),
}).openapi('User');

export const presentUserBasic = (u: Pick<UserRow, 'id' | 'username' | 'name' | 'state'>, origin: string) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked: false,
  avatar_url: null,
  web_url: `${origin}/${encodeURIComponent(u.username)}`,
});

/** `email` and `is_admin` only for the user themselves and administrators, as GitLab does. */
export const presentUser = (u: UserRow, origin: string, isPrivate: boolean) => ({
  ...presentUserBasic(u, origin),
  created_at: u.created_at,
  ...(isPrivate ? { email: u.email, is_admin: u.admin } : {}),
});
