import type { Env } from '../env';
import { kvExpiration } from './tokens';

/**
 * The group claims of OpenID Connect as GitLab releases them (config/initializers/
 * doorkeeper_openid_connect.rb): `groups`, the full paths of every group the user is in, directly
 * or through an ancestor group; `groups_direct`, those they are a direct member of; and the direct
 * groups where they are exactly Owner, Maintainer or Developer. Computed by
 * worker/services/group-claims.ts.
 */
export interface GroupClaims {
  groups: string[];
  groups_direct: string[];
  owner: string[];
  maintainer: string[];
  developer: string[];
}

/**
 * The group claims read when an OpenID Connect access token was issued, kept in KV beside the
 * token's record (under the same keyed hash, `claims:` for `at:`) until the token expires, so
 * `/oauth/userinfo` answers with two KV reads made at once, whatever the user's groups: it says
 * what the token was issued with, as the id_token did (a change shows from the next sign-in or
 * refresh). Whether the token still works is its own record's to say.
 */
const kvKey = (tokenHash: string) => `claims:${tokenHash}`;

export const putTokenClaims = async (env: Env, tokenHash: string, claims: GroupClaims, expiresAt: number): Promise<void> => {
  await env.TOKENS.put(kvKey(tokenHash), JSON.stringify(claims), { expiration: kvExpiration(expiresAt) });
};

export const readTokenClaims = (env: Env, tokenHash: string): Promise<GroupClaims | null> => env.TOKENS.get<GroupClaims>(kvKey(tokenHash), 'json');
