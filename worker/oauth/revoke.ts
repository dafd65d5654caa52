import type { Context } from 'hono';
import { userObject } from '../durable/user/user';
import type { BaseEnv } from '../env';
import { problems, raise } from '../errors';
import { lookupAccessToken, REFRESH_TOKEN_PREFIX, routeOf } from '../store/tokens';
import { authenticateClient } from './client-auth';
import { readOAuthParams } from './request-params';
import { NO_STORE } from '../protocol/token-response';

/**
 * `POST /login/oauth/revoke` (RFC 7009). Revoking either token of a grant ends the grant and
 * every token issued under it. Unknown, expired or foreign tokens get the same 200 (§2.2), so the
 * endpoint tells a caller nothing about tokens it does not hold.
 */
export const revocationEndpoint = async (c: Context<BaseEnv>) => {
  const params = await readOAuthParams(c);
  const client = await authenticateClient(c, params);
  const token = params.token ?? raise(problems.oauth('invalid_request', 'token is missing.'));
  // token_type_hint is only a hint (§2.1): the prefix says what the token is.
  const userId = routeOf(REFRESH_TOKEN_PREFIX, token);
  if (userId !== null) {
    await userObject(c.env, userId).revokeRefreshToken(token, client.clientId);
  } else {
    const found = await lookupAccessToken(c.env, token);
    if (found.status === 'active' && found.record.grantId && found.record.clientId === client.clientId) {
      await userObject(c.env, found.record.userId).revokeGrant(found.record.grantId, client.clientId);
    }
  }
  return c.body(null, 200, NO_STORE);
};
