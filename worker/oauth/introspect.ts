import type { Context } from 'hono';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory/directory';
import { userObject } from '../durable/user/user';
import type { BaseEnv } from '../env';
import { json, problems, raise } from '../errors';
import { lookupAccessToken, REFRESH_TOKEN_PREFIX, routeOf } from '../store/tokens';
import { authenticateClient } from './client-auth';
import { readOAuthParams } from './request-params';
import { NO_STORE } from '../protocol/token-response';

const INACTIVE = { active: false };

/**
 * `POST /login/oauth/introspect` (RFC 7662), for confidential clients. A client learns only
 * about tokens issued to itself; anything else, or anything not active, is `{"active":false}`.
 */
export const introspectionEndpoint = async (c: Context<BaseEnv>) => {
  const params = await readOAuthParams(c);
  const client = await authenticateClient(c, params, { confidentialOnly: true });
  const token = params.token ?? raise(problems.oauth('invalid_request', 'token is missing.'));
  const iss = publicOrigin(c.env, c.req.url);

  const userId = routeOf(REFRESH_TOKEN_PREFIX, token);
  if (userId !== null) {
    const info = await userObject(c.env, userId).describeRefreshToken(token);
    const user = info && info.clientId === client.clientId ? await directory(c.env).getUser(info.userId) : null;
    if (!info || !user) return json(INACTIVE, 200, NO_STORE);
    return json(
      {
        active: true,
        scope: info.scopes.join(' '),
        client_id: info.clientId,
        username: user.username,
        token_type: 'refresh_token',
        exp: info.expiresAt,
        iat: info.issuedAt,
        sub: String(info.userId),
        iss,
      },
      200,
      NO_STORE,
    );
  }

  const found = await lookupAccessToken(c.env, token);
  if (found.status !== 'active' || found.record.clientId !== client.clientId) return json(INACTIVE, 200, NO_STORE);
  const r = found.record;
  return json(
    {
      active: true,
      scope: r.scopes.join(' '),
      client_id: r.clientId,
      username: r.username,
      token_type: 'Bearer',
      exp: r.expiresAt,
      iat: r.createdAt,
      sub: String(r.userId),
      iss,
    },
    200,
    NO_STORE,
  );
};
