import { DEVELOPER, MAINTAINER, OWNER } from '../../shared/access-levels';
import { userIndexPartitions } from '../durable/index-partition/index-partition';
import type { Env } from '../env';
import type { GroupClaims } from '../store/token-claims';

/**
 * The user's group claims as they are now, read when a token is issued (so an approval shows in
 * the next sign-in, and a removal, expiry or demotion is gone from it). The one place they are
 * computed: from the index partitions the user's `User` lists, each answering for its own trees,
 * merged here.
 */
export const groupClaimsOf = async (env: Env, userId: number): Promise<GroupClaims> => {
  const partitions = await userIndexPartitions(env, userId);
  const parts = await Promise.all(partitions.map((p) => p.groupMemberships(userId)));
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
