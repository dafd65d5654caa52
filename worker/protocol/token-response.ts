/**
 * Protocol rules that both the OAuth endpoints (worker/oauth) and the grant authority
 * (worker/durable) apply; this layer imports neither.
 */
import type { TokenResponse } from '../../shared/api-types';

/** The token endpoint's success body, shared with the extension (shared/api-types). */
export type { TokenResponse };

/** RFC 6749 §5.1: a successful token response (plus GitLab's `created_at`, seconds since the epoch). */
export const tokenResponse = (t: { accessToken: string; refreshToken: string; expiresIn: number; scope: string; createdAt: number }): TokenResponse => ({
  access_token: t.accessToken,
  token_type: 'Bearer',
  expires_in: t.expiresIn,
  refresh_token: t.refreshToken,
  scope: t.scope,
  created_at: t.createdAt,
});

/** RFC 6749 §5.1: responses carrying tokens (and their errors) must not be cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
