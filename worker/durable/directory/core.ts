import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../../env';
import { migrate } from '../migrations';
import { partitionCount } from '../partitions';
import { DIRECTORY_SCHEMA } from './schema';
import { plainRows } from '../plain-rows';

/**
 * The base of the Directory (directory.ts): its SQLite tables, each user's queue of writes to KV,
 * and the partition count this deployment recorded. The layers above add, in turn, the path
 * registry (registry.ts), reading users (users.ts), personal and impersonation tokens
 * (tokens.ts), the fan-out of user changes (fanout-queue.ts), changing users (user-changes.ts)
 * and OAuth applications (applications.ts).
 */
export abstract class DirectoryCore extends DurableObject<Env> {
  protected readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, DIRECTORY_SCHEMA);
  }

  /**
   * Runs `task` after every earlier task of the same user has finished. What writes a user's
   * records to KV (issuing, revoking, the fan-out) goes through here, so no older write lands
   * after a newer one. In memory: a restarted object has no earlier task still running.
   */
  private readonly queues = new Map<number, Promise<unknown>>();

  protected serial<T>(userId: number, task: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(userId) ?? Promise.resolve()).then(task, task);
    const tail = run.catch(() => undefined);
    this.queues.set(userId, tail);
    void tail.then(() => {
      if (this.queues.get(userId) === tail) this.queues.delete(userId);
    });
    return run;
  }

  /**
   * The partition count this deployment's data is in: the one it recorded first, or the
   * configured one, recorded now (worker/middleware/partition-count.ts). The partition each
   * registry row is copied to and the id a new one takes follow it.
   */
  protected partitions(): number {
    const recorded = this.sql.exec<{ value: string }>("SELECT value FROM settings WHERE name = 'partition_count'").toArray()[0];
    return recorded ? Number(recorded.value) : this.recordPartitionCount(partitionCount(this.env));
  }

  /** The partition count this deployment recorded first (recording `count` if none was). */
  recordPartitionCount(count: number): number {
    const row = this.sql
      .exec<{ value: string }>(
        `INSERT INTO settings (name, value) VALUES ('partition_count', ?) ON CONFLICT (name) DO UPDATE SET value = value RETURNING value`,
        String(count),
      )
      .one();
    return Number(row.value);
  }
}
