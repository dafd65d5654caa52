import type { User, UserBasic } from '../../../shared/api-types';
import type { UserRow } from '../../durable/directory/types';

export { UserBasicSchema, UserSchema } from '../../../shared/schemas';

export const presentUserBasic = (u: Pick<UserRow, 'id' | 'username' | 'name' | 'state'>, origin: string): UserBasic => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked: false,
  avatar_url: null,
  web_url: `${origin}/${encodeURIComponent(u.username)}`,
});

/** `email`, `is_admin` and `two_factor_enabled` only for the user themselves and administrators, as GitLab does. */
export const presentUser = (
  u: Pick<UserRow, 'id' | 'username' | 'name' | 'state' | 'created_at' | 'email' | 'admin' | 'two_factor_enabled'>,
  origin: string,
  isPrivate: boolean,
): User => ({
  ...presentUserBasic(u, origin),
  created_at: u.created_at,
  ...(isPrivate ? { email: u.email, is_admin: u.admin, two_factor_enabled: u.two_factor_enabled } : {}),
});
