import type { MiddlewareHandler } from 'hono';
import type { BaseEnv, Env } from '../env';
import { problems, raise } from '../errors';
import { directory } from './directory/directory';

/**
 * Partitioned objects: state whose load grows with users is spread over `DIRECTORY_PARTITIONS`
 * Durable Objects of one class, each reached by a name `<role>:<partition>`, where the partition
 * is computed from the key alone (an id modulo the count, or a hash of a name), so routing a call
 * costs nothing and no object is asked where another key lives. See docs/architecture.md
 * ("Taking the Directory apart").
 *
 * The count is fixed for a deployment: a key's partition depends on it, and moving rows between
 * partitions is not built. A deployment records the count it first served with (in the
 * Directory); a Worker started with a different count answers every request with 503 naming both
 * (`requirePartitionCount`) rather than looking for keys where they are not.
 */

/** The count when `DIRECTORY_PARTITIONS` is unset. */
export const DEFAULT_PARTITIONS = 64;
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

/** The partition of a number (a user id, a top-level namespace id). */
export const partitionOfId = (id: number, count: number): number => ((id % count) + count) % count;

/**
 * The partition of a name. Names are compared case-insensitively everywhere (usernames and paths
 * are unique regardless of case, as in GitLab), so the hash is of the lower-cased name.
 */
export const partitionOfName = (name: string, count: number): number => fnv1a(name.toLowerCase()) % count;

/** The object name of a role's partition, e.g. `name:17`. */
export const partitionName = (role: string, partition: number): string => `${role}:${partition}`;

/**
 * The configured count this isolate has checked against the recorded one. A deployment's count
 * does not change under a running isolate (a new count is a new deployment); one isolate serving
 * several configurations (the tests' shared runtime) checks each.
 */
let checked: { count: string | undefined; done: Promise<void> } | null = null;

/** Compares the configured count with the one the deployment recorded (recording it the first time). */
export const checkPartitionCount = async (env: Env): Promise<void> => {
  const configured = partitionCount(env);
  const recorded = await directory(env).recordPartitionCount(configured);
  if (recorded === configured) {
    // Indexes kept by the version before partitions are copied out before anyone reads them here.
    await directory(env).moveIndexes();
    return;
  }
  raise(
    problems.unavailable(
      `DIRECTORY_PARTITIONS is ${configured} but this deployment's data is in ${recorded} partitions; moving data between partitions is not supported, so set it back to ${recorded}`,
    ),
  );
};

/**
 * Middleware: before the first request an isolate serves, the partition count is checked against
 * the recorded one; a mismatch answers 503 (and is checked again on the next request, so fixing the
 * setting needs no restart of anything but the deployment that changed it).
 */
export const requirePartitionCount: MiddlewareHandler<BaseEnv> = async (c, next) => {
  const count = c.env.DIRECTORY_PARTITIONS;
  if (checked?.count !== count) {
    const done: Promise<void> = checkPartitionCount(c.env).catch((error: unknown) => {
      if (checked?.done === done) checked = null;
      throw error;
    });
    checked = { count, done };
  }
  await checked.done;
  await next();
};
