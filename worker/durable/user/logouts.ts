import type { Env } from '../../env';
import type { GroupClaims } from '../../store/tokens';
import type { LogoutNotice } from '../client-holders/backchannel';
import { clientHoldersOf } from '../client-holders/client-holders';

/**
 * A user's side of back-channel logout (OpenID Connect Back-Channel Logout 1.0): in the
 * transaction that ends access, one row per (application, browser session `sid`) of the user's
 * grants that were given `openid` goes to `logout_outbox`; right after, they are handed to each
 * application's `ClientHolders` object, whose alarm delivers them (client-holders/backchannel.ts).
 * What could not be handed over stays for this object's alarm. Applications that registered no
 * `backchannel_logout_uri` drop theirs there.
 */

/** Why access ended, as each logout is logged (docs/oidc.md, "Back-channel logout"). */
export type LogoutReason = 'blocked' | 'deactivated' | 'deleted' | 'signed_out' | 'signed_out_everywhere' | 'authorization_revoked' | 'membership_ended';

/** Which of the user's live grants given `openid` a logout names. */
export type LogoutSelection = { all: true } | { clientId: string } | { sid: string; exceptClient: string | null } | { grantIds: string[] };

/** How soon the alarm hands over again what could not be handed over (ms). */
export const LOGOUT_HANDOVER_RETRY_MS = 10_000;

const filter = (s: LogoutSelection): [string, unknown[]] => {
  if ('all' in s) return ['', []];
  if ('clientId' in s) return ['AND client_id = ?', [s.clientId]];
  if ('sid' in s) return ['AND sid = ? AND client_id != ?', [s.sid, s.exceptClient ?? '']];
  return ['AND id IN (SELECT value FROM json_each(?))', [JSON.stringify(s.grantIds)]];
};

/**
 * Inside the transaction that ends access, before the grants are revoked: queues one logout per
 * (application, `sid`) of the selected live grants given `openid`, naming the issuer the grant's
 * id_tokens named. Answers how many were queued.
 */
export const queueLogouts = (sql: SqlStorage, selection: LogoutSelection, reason: LogoutReason): number => {
  const [where, args] = filter(selection);
  const rows = sql
    .exec<{ client_id: string; sid: string | null; issuer: string }>(
      `SELECT DISTINCT client_id, sid, issuer FROM grants
       WHERE revoked_at IS NULL AND instr(' ' || scopes || ' ', ' openid ') > 0 ${where}`,
      ...(args as string[]),
    )
    .toArray();
  for (const r of rows) {
    sql.exec('INSERT INTO logout_outbox (jti, client_id, sid, issuer, reason) VALUES (?, ?, ?, ?, ?)', crypto.randomUUID(), r.client_id, r.sid, r.issuer, reason);
  }
  return rows.length;
};

export const logoutsWaiting = (sql: SqlStorage): boolean => sql.exec('SELECT 1 FROM logout_outbox LIMIT 1').toArray().length > 0;

/** Hands the queued logouts to their applications' objects (idempotent there, by `jti`); true when none is left. */
export const handOverLogouts = async (env: Env, sql: SqlStorage, userId: number): Promise<boolean> => {
  const rows = sql.exec<{ jti: string; client_id: string; sid: string | null; issuer: string; reason: string }>('SELECT * FROM logout_outbox').toArray();
  if (rows.length === 0) return true;
  const byClient = new Map<string, LogoutNotice[]>();
  for (const r of rows) byClient.set(r.client_id, [...(byClient.get(r.client_id) ?? []), { jti: r.jti, userId, sid: r.sid, issuer: r.issuer, reason: r.reason }]);
  const clients = [...byClient.keys()];
  const sent = await Promise.allSettled(clients.map((c) => clientHoldersOf(env, c).queueLogouts(byClient.get(c) ?? [])));
  let left = false;
  sent.forEach((s, i) => {
    const handed = JSON.stringify((byClient.get(clients[i]) ?? []).map((n) => n.jti));
    if (s.status === 'fulfilled') sql.exec('DELETE FROM logout_outbox WHERE jti IN (SELECT value FROM json_each(?))', handed);
    else left = true;
  });
  return !left;
};

/** A live token pair issued with group claims, whose application was not yet told of a loss. */
interface PairWithClaims {
  refreshHash: string;
  grantId: string;
  groups: GroupClaims;
}

export const pairsWithGroupClaims = (sql: SqlStorage): PairWithClaims[] =>
  sql
    .exec<{ refresh_hash: string; grant_id: string; groups: string }>(
      `SELECT p.refresh_hash, p.grant_id, p.groups FROM token_pairs p JOIN grants g ON g.id = p.grant_id
       WHERE p.state = 'active' AND g.revoked_at IS NULL AND p.groups IS NOT NULL AND p.claims_lost = 0`,
    )
    .toArray()
    .map((r) => ({ refreshHash: r.refresh_hash, grantId: r.grant_id, groups: JSON.parse(r.groups) as GroupClaims }));

/** Inside the transaction that queued their logouts: these pairs' applications were told. */
export const markClaimsLost = (sql: SqlStorage, pairs: PairWithClaims[]): void => {
  for (const p of pairs) sql.exec('UPDATE token_pairs SET claims_lost = 1 WHERE refresh_hash = ?', p.refreshHash);
};
