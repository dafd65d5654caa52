import type { Context } from 'hono';
import { presentedToken } from '../auth/api-auth';
import { publicOrigin } from '../config';
import type { BaseEnv } from '../env';
import { json, problems, raise, type Problem } from '../errors';
import { NO_STORE } from '../protocol/token-response';
import { lookupAccessToken } from '../store/tokens';
import { releasedClaims, userClaims } from './claims';

/** RFC 6750 §3.1: no token (a challenge without an error code), or one Knock does not know. */
const unauthorized = (error: 'invalid_request' | 'invalid_token', description: string): Problem =>
  problems.oauth(error, description, 401, {
    'WWW-Authenticate': error === 'invalid_request' ? 'Bearer realm="Knock"' : `Bearer realm="Knock", error="invalid_token", error_description="${description}"`,
  });

/**
 * `GET` and `POST /oauth/userinfo` (OpenID Connect Core 1.0 §5.3, GitLab's path): the claims about
 * the user of an access token granted `openid`, as GitLab releases them there: the profile as it is
 * now (the token's record follows every change of the user), and the group claims as they were
 * read when the token was issued, which the record carries: one KV read, whatever the user's groups.
 */
export const userinfoEndpoint = async (c: Context<BaseEnv>) => {
  // RFC 6750 §2.1 (and GitLab's PRIVATE-TOKEN, which never carries openid).
  const token = presentedToken(c.req.raw.headers);
  if (!token) return raise(unauthorized('invalid_request', 'Send the access token as Authorization: Bearer.'));
  const found = await lookupAccessToken(c.env, token);
  if (found.status === 'expired') return raise(problems.tokenExpired());
  if (found.status === 'revoked') return raise(problems.tokenRevoked());
  if (found.status === 'unknown') return raise(unauthorized('invalid_token', 'The access token is unknown'));
  const record = found.record;
  // Core §5.3.1: the token must have been granted openid; personal access tokens never are.
  if (!record.scopes.includes('openid')) return raise(problems.insufficientScope(['openid']));
  const user = { id: record.userId, username: record.username, name: record.name, email: record.email };
  return json(releasedClaims('userinfo', record.scopes, userClaims(user, publicOrigin(c.env, c.req.url), record.groups ?? null)), 200, NO_STORE);
};
