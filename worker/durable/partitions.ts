import type { Env } from '../env';
import { problems, raise } from '../errors';

/**
 * Partitioned objects: state whose load grows with users is spread over `DIRECTORY_PARTITIONS`
 * Durable Objects of one class, each reached by a name `<role>:<partition>`, where the partition
 * is computed from the key alone (an id modulo the count, or a hash of a name), so routing a call
 * costs nothing and no object is asked where another key lives. See docs/decisions.md
 * ("The Directory on no hot path").
 *
 * The count is fixed for a deployment: a key's partition depends on it, and moving rows between
 * partitions is not built. A deployment records the count it first served with (in the
 * Directory); a Worker started with a different count answers every request with 503 naming both
 * (worker/middleware/partition-count.ts) rather than looking for keys where they are not.
 */

/** The count when `DIRECTORY_PARTITIONS` is unset. */
const DEFAULT_PARTITIONS = 64;
/** At most this many: a partition's number must fit the id encodings that carry it. */
export const MAX_PARTITIONS = 1024;

/** `DIRECTORY_PARTITIONS` as a whole number in 1..MAX_PARTITIONS; anything else is a configuration error. */
export const partitionCount = (env: Env): number => {
  const value = env.DIRECTORY_PARTITIONS;
  if (value === undefined || value === '') return DEFAULT_PARTITIONS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARTITIONS) {
    raise(problems.unavailable(`DIRECTORY_PARTITIONS must be a whole number from 1 to ${MAX_PARTITIONS}, not "${value}"`));
  }
  return n;
};

/**
 * 32-bit FNV-1a of a string's UTF-8 bytes: stable across runtimes and versions (a partition must
 * never move), cheap, and spread well enough for names. Not a security boundary: which partition
 * holds a key is not secret.
 */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
};

/** The partition of a number (a user id; a group's or project's id, which is its tree's: `idInTreeOf`). */
export const partitionOfId = (id: number, count: number): number => ((id % count) + count) % count;

/**
 * The id of a new group or project below a top-level row (a subgroup, a group's project, a
 * personal project): the smallest above `last`, the highest id ever used (AUTOINCREMENT's
 * `sqlite_sequence`, so a deleted id is never taken again), that falls in the partition of its
 * tree's root. Every row of a tree then has its root's partition, so the partition of an id is
 * the one index partition that holds the row: finding a group or project by id is one call
 * (index-partition/index-partition.ts `locateNamespace`). Ids stay positive integers, as
 * GitLab's are; sparse (at most `count - 1` skipped per row).
 */
export const idInTreeOf = (rootId: number, last: number, count: number): number => {
  const next = last + 1;
  return next + partitionOfId(partitionOfId(rootId, count) - partitionOfId(next, count), count);
};

/**
 * The partition of a name. Names are compared case-insensitively everywhere (usernames and paths
 * are unique regardless of case, as in GitLab), so the hash is of the lower-cased name.
 */
export const partitionOfName = (name: string, count: number): number => fnv1a(name.toLowerCase()) % count;

/** The object name of a role's partition, e.g. `name:17`. */
export const partitionName = (role: string, partition: number): string => `${role}:${partition}`;
