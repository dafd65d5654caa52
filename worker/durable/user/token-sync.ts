import type { Env } from '../../env';
import { epochSeconds } from '../../clock';
import { accessTokenRecord, putAccessToken, revokeAccessTokens } from '../../store/tokens';
import type { UserSnapshot } from '../directory/types';
import { LIVE_PAIR, pairTokenFacts } from './rows';

/**
 * Makes every access token of the user that KV may still accept agree with the user stored in
 * their `User` object (user.ts `syncTokens` runs it, one run at a time): for an active user, live
 * tokens carry the current profile; otherwise each becomes a tombstone. Each pass first waits for
 * the new tokens still being written (`inFlight`), so none of those lands after it; repeats while
 * the user changed meanwhile.
 */
export const syncTokenRecords = async (env: Env, sql: SqlStorage, inFlight: () => Promise<unknown>): Promise<void> => {
  for (;;) {
    await inFlight();
    const state = sql.exec<{ snapshot: string; version: number; synced_version: number }>('SELECT snapshot, version, synced_version FROM user_state').toArray()[0];
    if (!state || state.synced_version >= state.version) return;
    const user = JSON.parse(state.snapshot) as UserSnapshot;
    const now = epochSeconds();
    if (user.state === 'active') {
      const live = sql
        .exec<{ access_hash: string; access_expires_at: number; scopes: string; created_at: number; grant_id: string; client_id: string; groups: string | null }>(
          `SELECT p.access_hash, p.access_expires_at, p.scopes, p.created_at, p.grant_id, g.client_id, p.groups
           FROM token_pairs p JOIN grants g ON g.id = p.grant_id
           WHERE ${LIVE_PAIR} AND p.access_expires_at > ?`,
          now,
        )
        .toArray();
      await Promise.all(
        live.map((t) =>
          putAccessToken(
            env,
            t.access_hash,
            accessTokenRecord(user, pairTokenFacts(t, { clientId: t.client_id, grantId: t.grant_id })),
          ),
        ),
      );
      // A grant revoked while those were written: its tombstone must be the last write.
      const ended = live.filter(
        (t) => !sql.exec(`SELECT 1 FROM token_pairs p JOIN grants g ON g.id = p.grant_id WHERE p.grant_id = ? AND p.access_hash = ? AND ${LIVE_PAIR}`, t.grant_id, t.access_hash).toArray()[0],
      );
      await revokeAccessTokens(env, ended.map((t) => ({ hash: t.access_hash, expiresAt: t.access_expires_at })));
    } else {
      const live = sql
        .exec<{ hash: string; expiresAt: number }>('SELECT access_hash AS hash, access_expires_at AS expiresAt FROM token_pairs WHERE access_expires_at > ?', now)
        .toArray();
      await revokeAccessTokens(env, live);
    }
    sql.exec('UPDATE user_state SET synced_version = ? WHERE version = ?', state.version, state.version);
  }
};
