import { config } from '../../config';
import { epochSeconds } from '../../clock';
import type { Env } from '../../env';
import { tokenResponse } from '../../protocol/token-response';
import { REFRESH_TOKEN_PREFIX, hashSecret, newAccessToken, newRoutedSecret, type GroupClaims } from '../../store/tokens';
import { groupClaimsOf } from './group-claims';
import type { PreparedPair } from './rows';

/** A new access and refresh token for the user, with their keyed hashes: all of a pair that is not in storage. */
export interface FreshTokens {
  accessToken: string;
  refreshToken: string;
  accessHash: string;
  refreshHash: string;
  createdAt: number;
}

export const freshTokens = async (env: Env, userId: number): Promise<FreshTokens> => {
  const createdAt = epochSeconds();
  const accessToken = newAccessToken(createdAt + config(env).accessTokenTtl);
  const refreshToken = newRoutedSecret(REFRESH_TOKEN_PREFIX, userId);
  const [accessHash, refreshHash] = await Promise.all([hashSecret(env, accessToken), hashSecret(env, refreshToken)]);
  return { accessToken, refreshToken, accessHash, refreshHash, createdAt };
};

/** The pair `tokens` make for a grant: its answer and what its access token's KV record says. */
export const pairOf = (env: Env, tokens: FreshTokens, clientId: string, grantId: string, scopes: string[], groups: GroupClaims | undefined): PreparedPair => {
  const { accessTokenTtl, refreshTokenTtl } = config(env);
  const { createdAt: now } = tokens;
  const scope = [...scopes].sort().join(' ');
  return {
    grantId,
    accessHash: tokens.accessHash,
    refreshHash: tokens.refreshHash,
    refreshExpiresAt: now + refreshTokenTtl,
    response: tokenResponse({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: accessTokenTtl, scope, createdAt: now }),
    token: { scopes: scope.split(' '), clientId, grantId, tokenId: null, createdAt: now, expiresAt: now + accessTokenTtl, ...(groups && { groups }) },
  };
};

/**
 * A new pair for `scopes`. With `openid` (OpenID Connect Core 1.0 §5.4), the user's group claims
 * are read at the same time (group-claims.ts), for the id_token and the access token's record;
 * `partitions` (the user's index partitions) is asked only then.
 */
export const preparePair = async (env: Env, partitions: () => number[], userId: number, clientId: string, grantId: string, scopes: string[]): Promise<PreparedPair> => {
  const [tokens, groups] = await Promise.all([freshTokens(env, userId), scopes.includes('openid') ? groupClaimsOf(env, partitions(), userId) : undefined]);
  return pairOf(env, tokens, clientId, grantId, scopes, groups);
};
