import type { MiddlewareHandler } from 'hono';
import { directory } from '../durable/directory/directory';
import { partitionCount } from '../durable/partitions';
import type { BaseEnv, Env } from '../env';
import { problems, raise } from '../errors';

/**
 * A deployment keeps the partition count it first ran with (worker/durable/partitions.ts): a key's
 * partition depends on it, and rows are never moved between partitions. The Directory records the
 * count on first use; a Worker configured with another answers 503 naming both rather than looking
 * for keys where they are not.
 */
export const checkPartitionCount = async (env: Env): Promise<void> => {
  const configured = partitionCount(env);
  const recorded = await directory(env).recordPartitionCount(configured);
  if (recorded === configured) return;
  raise(
    problems.unavailable(
      `DIRECTORY_PARTITIONS is ${configured} but this deployment's data is in ${recorded} partitions; moving data between partitions is not supported, so set it back to ${recorded}`,
    ),
  );
};

/**
 * The configured count this isolate has checked against the recorded one. A deployment's count
 * does not change under a running isolate (a new count is a new deployment); one isolate serving
 * several configurations (the tests' shared runtime) checks each.
 */
let checked: { count: string | undefined; done: Promise<void> } | null = null;

/**
 * Before the first request an isolate serves, the configured count is checked against the
 * recorded one (one Directory call per isolate); a mismatch answers 503, and is checked again on
 * the next request, so setting the count back needs no restart.
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
