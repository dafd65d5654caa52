import { clock } from '../../clock';
import { epochOf } from '../../store/tokens';

/**
 * A user's browser sessions (the `sessions` table of schema.ts), under the keyed hash of the
 * session cookie. Each records the version of the user it began under, so a new password ends
 * exactly the sessions begun before it.
 */

/** Records a new session (and forgets the expired ones). */
export const startSession = (sql: SqlStorage, s: { idHash: string; csrfToken: string; ttlSeconds: number; userVersion: number }): void => {
  const now = clock.now();
  sql.exec('DELETE FROM sessions WHERE expires_at <= ?', now);
  sql.exec(
    'INSERT INTO sessions (id_hash, csrf_token, created_at, expires_at, user_version) VALUES (?, ?, ?, ?, ?)',
    s.idHash,
    s.csrfToken,
    new Date(now).toISOString(),
    now + s.ttlSeconds * 1000,
    s.userVersion,
  );
};

/** A session that has not expired: its CSRF token and when the user signed in (epoch seconds, an id_token's `auth_time`). */
export const liveSession = (sql: SqlStorage, idHash: string): { csrfToken: string; signedInAt: number } | null => {
  const row = sql
    .exec<{ csrf_token: string; expires_at: number; created_at: string }>('SELECT csrf_token, expires_at, created_at FROM sessions WHERE id_hash = ?', idHash)
    .toArray()[0];
  if (!row || row.expires_at <= clock.now()) return null;
  return { csrfToken: row.csrf_token, signedInAt: epochOf(row.created_at) };
};
