import { config } from '../../config';
import { epochSeconds } from '../../clock';
import type { Env } from '../../env';
import { tokenResponse } from '../../protocol/token-response';
import { REFRESH_TOKEN_PREFIX, hashSecret, newAccessToken, newRoutedSecret } from '../../store/tokens';
import { groupClaimsOf } from './group-claims';
import type { PreparedPair } from './rows';

/**
 * A new pair for `scopes`. With `openid` (OpenID Connect Core 1.0 §5.4), the user's group claims
 * are read at the same time (group-claims.ts), for the id_token and the access token's record;
 * `partitions` (the user's index partitions) is asked only then.
 */
export const preparePair = async (env: Env, partitions: () => number[], userId: number, clientId: string, grantId: string, scopes: string[]): Promise<PreparedPair> => {
  const { accessTokenTtl, refreshTokenTtl } = config(env);
  const now = epochSeconds();
  const accessToken = newAccessToken(now + accessTokenTtl);
  const refreshToken = newRoutedSecret(REFRESH_TOKEN_PREFIX, userId);
  const [accessHash, refreshHash, groups] = await Promise.all([
    hashSecret(env, accessToken),
    hashSecret(env, refreshToken),
    scopes.includes('openid') ? groupClaimsOf(env, partitions(), userId) : undefined,
  ]);
  const scope = [...scopes].sort().join(' ');
  return {
    grantId,
    accessHash,
    refreshHash,
    refreshExpiresAt: now + refreshTokenTtl,
    response: tokenResponse({ accessToken, refreshToken, expiresIn: accessTokenTtl, scope, createdAt: now }),
    token: { scopes: scope.split(' '), clientId, grantId, tokenId: null, createdAt: now, expiresAt: now + accessTokenTtl, ...(groups && { groups }) },
  };
};
