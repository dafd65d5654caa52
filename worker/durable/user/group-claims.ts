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

/** The level a set of group claims gives `path`: Owner, Maintainer, Developer, else below them. */
const claimedLevel = (c: GroupClaims, path: string): number =>
  c.owner.includes(path) ? OWNER : c.maintainer.includes(path) ? MAINTAINER : c.developer.includes(path) ? DEVELOPER : 0;

/**
 * Whether the user lost something `issued` (the claims a token was issued with) named: a group no
 * longer in `groups` or `groups_direct` (a membership removed or expired, directly or through an
 * ancestor group), or a group whose Owner, Maintainer or Developer claim now names a lower level
 * (a demotion). A promotion, or a group gained, is no loss. What sends the application a
 * back-channel logout (docs/oidc.md, "Back-channel logout").
 */
export const claimsLost = (issued: GroupClaims, now: GroupClaims): boolean =>
  issued.groups.some((g) => !now.groups.includes(g)) ||
  issued.groups_direct.some((g) => !now.groups_direct.includes(g)) ||
  [...issued.owner, ...issued.maintainer, ...issued.developer].some((g) => claimedLevel(now, g) < claimedLevel(issued, g));
