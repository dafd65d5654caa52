import type { ImpersonationToken, PersonalAccessToken } from '../../../shared/api-types';
import type { AccessTokenRow } from '../../durable/directory/types';
import { epochSeconds } from '../../clock';

/** Whether a token still works at this moment (GitLab's `active`: neither revoked nor expired). */
export const isActive = (t: AccessTokenRow): boolean => !t.revoked && t.expires_at > epochSeconds();

/** GitLab's `PersonalAccessToken` entity; `expires_at` as the date it ends (00:00 UTC). */
export const presentPersonalAccessToken = (t: AccessTokenRow): PersonalAccessToken => ({
  id: t.id,
  name: t.name,
  revoked: t.revoked,
  created_at: t.created_at,
  scopes: t.scopes,
  user_id: t.user_id,
  last_used_at: t.last_used_at,
  active: isActive(t),
  expires_at: new Date(t.expires_at * 1000).toISOString().slice(0, 10),
});

/** GitLab's `ImpersonationToken` entity: the same, and whether it is one. */
export const presentImpersonationToken = (t: AccessTokenRow): ImpersonationToken => ({ ...presentPersonalAccessToken(t), impersonation: t.impersonation });
