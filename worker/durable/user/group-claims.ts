import { DEVELOPER, MAINTAINER, OWNER } from '../../../shared/access-levels';
import type { Env } from '../../env';
import type { GroupClaims } from '../../store/tokens';
import { indexPartition } from '../index-partition/index-partition';

/**
 * The user's group claims as they are now (worker/store/tokens.ts `GroupClaims`), read when a
 * token is issued, so an approval shows in the next sign-in or refresh and a removal, expiry or
 * demotion is gone from it. The one place they are computed: from the index partitions the user's
 * `User` object lists (`partitions`), each answering for its own trees
 * (index-partition/group-memberships.ts), merged here. The `User` object asks while it redeems a
 * code or a refresh token granted `openid`, so the claims ride in the access token's one KV record.
 */
export const groupClaimsOf = async (env: Env, partitions: number[], userId: number): Promise<GroupClaims> => {
  const parts = await Promise.all(partitions.map((p) => indexPartition(env, p).groupMemberships(userId)));
  const direct = parts.flatMap((p) => p.direct).sort((a, b) => (a.fullPath < b.fullPath ? -1 : a.fullPath > b.fullPath ? 1 : 0));
  const at = (level: number) => direct.filter((d) => d.accessLevel === level).map((d) => d.fullPath);
  return {
    groups: [...new Set(parts.flatMap((p) => p.reached))].sort(),
    groups_direct: direct.map((d) => d.fullPath),
    owner: at(OWNER),
    maintainer: at(MAINTAINER),
    developer: at(DEVELOPER),
  };
};
