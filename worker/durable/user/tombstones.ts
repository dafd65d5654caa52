import type { Env } from '../../env';
import { revokeAccessTokens } from '../../store/tokens';
import type { EndedToken } from './rows';

/**
 * The outbox of access tokens' tombstones (`tombstone_outbox`): a token that ends (its grant
 * revoked, its pair rotated) is queued in the transaction that ends it, so a crash before its
 * KV record became a tombstone leaves the `User`'s alarm to write it (RFC 7009 §2.2: a revoked
 * token is not accepted again), not a token that works until it expires.
 */

/** Queues the tombstones of `ended`, in the running transaction. */
export const queueTombstones = (sql: SqlStorage, ended: EndedToken[]): void => {
  for (const t of ended) sql.exec('INSERT INTO tombstone_outbox (access_hash, expires_at) VALUES (?, ?) ON CONFLICT (access_hash) DO NOTHING', t.hash, t.expiresAt);
};

export const tombstonesWaiting = (sql: SqlStorage): boolean => sql.exec('SELECT 1 FROM tombstone_outbox LIMIT 1').toArray().length > 0;

/** Writes the tombstones of `ended` to KV, then takes them out of the outbox. */
export const writeTombstones = async (env: Env, sql: SqlStorage, ended: EndedToken[]): Promise<void> => {
  if (ended.length === 0) return;
  await revokeAccessTokens(env, ended);
  sql.exec('DELETE FROM tombstone_outbox WHERE access_hash IN (SELECT value FROM json_each(?))', JSON.stringify(ended.map((t) => t.hash)));
};

/** Writes every queued tombstone (the alarm's part); one of a token expired since is dropped, as KV drops its record. */
export const writeQueuedTombstones = async (env: Env, sql: SqlStorage, now: number): Promise<void> => {
  sql.exec('DELETE FROM tombstone_outbox WHERE expires_at <= ?', now);
  const queued = sql.exec<EndedToken>('SELECT access_hash AS hash, expires_at AS expiresAt FROM tombstone_outbox').toArray();
  await writeTombstones(env, sql, queued);
};
