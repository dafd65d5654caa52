import { env } from 'cloudflare:workers';
import { allIndexPartitions, treeIndex } from '../../../worker/durable/index-partition/index-partition';

/**
 * What the membership and requester indexes say, wherever they keep it: a test does not need to
 * know a group's or project's tree to ask, so these ask every index partition.
 */

/**
 * The index's row for one user in one group or project (level 0 once removed), or null: asked of
 * the partition of its tree when the caller knows the tree's root (its top-level group), else of
 * every partition.
 */
export const indexedMembership = async (namespaceId: number, userId: number, rootId?: number) => {
  const partitions = rootId === undefined ? allIndexPartitions(env) : [treeIndex(env, rootId, [])];
  return (await Promise.all(partitions.map((p) => p.membershipOf(namespaceId, userId)))).find((m) => m !== null) ?? null;
};

/** The groups and projects where the requester index has a user's pending requests, by id. */
export const indexedPendingRequests = async (userId: number) =>
  (await Promise.all(allIndexPartitions(env).map((p) => p.pendingRequestsOf(userId)))).flat().sort((a, b) => a.id - b.id);
