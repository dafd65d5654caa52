import type { AccessToken } from '../../../shared/api-types';
import type { AccessTokenRow } from '../../durable/directory';
import { isActive } from '../../services/access-tokens';

/** GitLab's token entity; `expires_at` as the date it ends (00:00 UTC). */
export const presentAccessToken = (t: AccessTokenRow): AccessToken => ({
  id: t.id,
  name: t.name,
  revoked: t.revoked,
  created_at: t.created_at,
  scopes: t.scopes,
  user_id: t.user_id,
  active: isActive(t),
  expires_at: new Date(t.expires_at * 1000).toISOString().slice(0, 10),
  impersonation: t.impersonation,
});
