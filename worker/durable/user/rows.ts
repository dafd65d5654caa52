import { isoNow } from '../../clock';
import type { Problem } from '../../errors';
import type { TokenResponse } from '../../protocol/token-response';
import type { AccessTokenRecord, GroupClaims, TokenFacts } from '../../store/tokens';
import type { Authentication, Authorization, RefreshTokenInfo } from './contract';
import { queueTombstones } from './tombstones';

/** The rows of a user's token-service tables (schema.ts) as user.ts reads them, and what its transactions decide. */

export type CodeRow = {
  hash: string;
  client_id: string;
  user_id: number;
  redirect_uri: string | null;
  scopes: string;
  code_challenge: string | null;
  expires_at: number;
  grant_id: string | null;
  nonce: string | null;
  auth_time: number | null;
  sid: string | null;
};

export type PairRow = {
  refresh_hash: string;
  grant_id: string;
  access_hash: string;
  access_expires_at: number;
  refresh_expires_at: number;
  scopes: string;
  created_at: number;
  state: 'active' | 'rotated' | 'revoked';
  successor_hash: string | null;
  retry_request: string | null;
  retry_response: ArrayBuffer | null;
  retry_until: number | null;
  groups: string | null;
  client_id: string;
  user_id: number;
  grant_scopes: string;
  grant_revoked_at: string | null;
  auth_time: number | null;
  sid: string | null;
};

/** A token pair made ready (and hashed) before the transaction that decides whether it exists. */
export interface PreparedPair {
  grantId: string;
  response: TokenResponse;
  accessHash: string;
  refreshHash: string;
  refreshExpiresAt: number;
  /** What the access token's KV record says besides the user, whose profile is read in the transaction. */
  token: TokenFacts;
}

export type EndedToken = { hash: string; expiresAt: number };

/** A pair issued: the effects outside the object (its KV writes) follow the transaction. */
export type Issuance = { kind: 'issued'; pair: PreparedPair; record: AccessTokenRecord; ended: EndedToken[]; authentication: Authentication };
/** What a transaction decided; the effects outside the object (KV writes) follow it. */
export type Decision = Issuance | { kind: 'refused'; problem: Problem; ended: EndedToken[] };
/**
 * A refresh may also be answered again with the answer of an identical earlier one: its sealed
 * tokens (protocol/sealed-response.ts) and the rest from the row of the pair they made (`successor`).
 * Its KV writes (`issued`: the successor's record, the rotated token's tombstone) are made again
 * before it answers, since the first answer may have been lost with them (a crash, a failed write).
 */
export type Outcome =
  | Decision
  | { kind: 'retry'; sealed: ArrayBuffer; successor: { scope: string; createdAt: number; expiresAt: number }; issued: Omit<Issuance, 'pair'> & { pair: Omit<PreparedPair, 'response'> } };

const PAIR_SELECT = `SELECT p.*, g.client_id, g.user_id, g.scopes AS grant_scopes, g.revoked_at AS grant_revoked_at, g.auth_time, g.sid
  FROM token_pairs p JOIN grants g ON g.id = p.grant_id`;

/** Redeemed codes are kept this long past their expiry so a late replay still revokes. */
const USED_CODE_MEMORY_SECONDS = 24 * 3600;

export const codeRow = (sql: SqlStorage, hash: string): CodeRow | undefined => sql.exec<CodeRow>('SELECT * FROM codes WHERE hash = ?', hash).toArray()[0];

export const pairRow = (sql: SqlStorage, refreshHash: string): PairRow | undefined =>
  sql.exec<PairRow>(`${PAIR_SELECT} WHERE p.refresh_hash = ?`, refreshHash).toArray()[0];

export const insertPair = (sql: SqlStorage, p: PreparedPair): void => {
  sql.exec(
    `INSERT INTO token_pairs (refresh_hash, grant_id, access_hash, access_expires_at, refresh_expires_at, scopes, created_at, state, groups)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?)`,
    p.refreshHash,
    p.grantId,
    p.accessHash,
    p.token.expiresAt,
    p.refreshExpiresAt,
    p.response.scope,
    p.token.createdAt,
    p.token.groups ? JSON.stringify(p.token.groups) : null,
  );
};

/** RFC 7662 for refresh tokens: what the pair's refresh token is while active, or null. */
export const refreshTokenInfo = (pair: PairRow | undefined, now: number): RefreshTokenInfo | null => {
  if (!pair || pair.state !== 'active' || pair.grant_revoked_at || pair.refresh_expires_at <= now) return null;
  return { userId: pair.user_id, clientId: pair.client_id, scopes: scopeList(pair.grant_scopes), issuedAt: pair.created_at, expiresAt: pair.refresh_expires_at };
};

/** Revokes a grant and its pairs in the running transaction; the access tokens that must become tombstones. */
export const revokeGrantRows = (sql: SqlStorage, grantId: string, now: number): EndedToken[] => {
  sql.exec('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', isoNow(), grantId);
  const live = sql
    .exec<{ access_hash: string; access_expires_at: number }>(
      'SELECT access_hash, access_expires_at FROM token_pairs WHERE grant_id = ? AND access_expires_at > ?',
      grantId,
      now,
    )
    .toArray();
  sql.exec(
    "UPDATE token_pairs SET state = 'revoked', retry_request = NULL, retry_response = NULL WHERE grant_id = ?",
    grantId,
  );
  const ended = live.map((t) => ({ hash: t.access_hash, expiresAt: t.access_expires_at }));
  queueTombstones(sql, ended);
  return ended;
};

/** Forgets what can no longer matter: long-expired codes, dead pairs, stale retry answers. */
export const cleanUp = (sql: SqlStorage, now: number): void => {
  sql.exec('DELETE FROM codes WHERE expires_at <= ?', now - USED_CODE_MEMORY_SECONDS);
  sql.exec('DELETE FROM sessions WHERE expires_at <= ?', now * 1000);
  sql.exec('DELETE FROM token_pairs WHERE refresh_expires_at <= ? AND access_expires_at <= ?', now, now);
  sql.exec(
    'UPDATE token_pairs SET retry_request = NULL, retry_response = NULL WHERE retry_until <= ? AND retry_response IS NOT NULL',
    now,
  );
  sql.exec(
    `DELETE FROM grants WHERE NOT EXISTS (SELECT 1 FROM token_pairs p WHERE p.grant_id = grants.id)
       AND NOT EXISTS (SELECT 1 FROM codes c WHERE c.grant_id = grants.id)`,
  );
};

/** A stored space-separated scope list as an array. */
export const scopeList = (s: string) => s.split(' ').filter(Boolean);

/** What a stored pair's access token record says besides the user: its row, and its grant's client and id. */
export const pairTokenFacts = (
  p: { scopes: string; created_at: number; access_expires_at: number; groups: string | null },
  grant: { clientId: string; grantId: string },
): TokenFacts => ({
  scopes: scopeList(p.scopes),
  clientId: grant.clientId,
  grantId: grant.grantId,
  tokenId: null,
  createdAt: p.created_at,
  expiresAt: p.access_expires_at,
  ...(p.groups !== null && { groups: JSON.parse(p.groups) as GroupClaims }),
});

/**
 * A pair whose access token is live, over `token_pairs p JOIN grants g ON g.id = p.grant_id`: the
 * pair neither rotated nor revoked, its grant not revoked (a revoked authorization, a deleted
 * application, a user who may no longer act all revoke it). With `p.access_expires_at > now`, the
 * one definition of an access token the user's object still stands behind.
 */
export const LIVE_PAIR = "p.state = 'active' AND g.revoked_at IS NULL";

/** The scopes of the live access token of grant `grantId` whose keyed hash is `accessHash` (one `token_pairs_grant` lookup), or null. */
export const liveAccessToken = (sql: SqlStorage, grantId: string, accessHash: string, now: number): { scopes: string[] } | null => {
  const row = sql
    .exec<{ scopes: string }>(
      `SELECT p.scopes FROM token_pairs p JOIN grants g ON g.id = p.grant_id WHERE p.grant_id = ? AND p.access_hash = ? AND ${LIVE_PAIR} AND p.access_expires_at > ?`,
      grantId,
      accessHash,
      now,
    )
    .toArray()[0];
  return row ? { scopes: scopeList(row.scopes) } : null;
};

/** What the authorized-applications page lists: each application with a remembered consent or a live grant, its scopes merged. */
export const authorizationsOf = (sql: SqlStorage, now: number): Authorization[] => {
  const rows = sql
    .exec<{ client_id: string; scopes: string; created_at: string }>(
      `SELECT client_id, scopes, created_at FROM consents
       UNION ALL
       SELECT g.client_id, g.scopes, g.created_at FROM grants g
       WHERE g.revoked_at IS NULL AND EXISTS (
         SELECT 1 FROM token_pairs p WHERE p.grant_id = g.id AND p.state = 'active' AND p.refresh_expires_at > ?)`,
      now,
    )
    .toArray();
  const byClient = new Map<string, Authorization>();
  for (const row of rows) {
    const seen = byClient.get(row.client_id);
    if (!seen) {
      byClient.set(row.client_id, { clientId: row.client_id, scopes: scopeList(row.scopes), authorizedAt: row.created_at });
      continue;
    }
    seen.scopes = [...new Set([...seen.scopes, ...scopeList(row.scopes)])].sort();
    if (row.created_at < seen.authorizedAt) seen.authorizedAt = row.created_at;
  }
  return [...byClient.values()].sort((a, b) => a.authorizedAt.localeCompare(b.authorizedAt));
};
