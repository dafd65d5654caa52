import { epochSeconds, isoNow } from '../../clock';
import { problems } from '../../errors';
import { accessTokenRecord, epochOf, putAccessToken, revokeAccessTokens } from '../../store/tokens';
import { fail, ok, type Result } from '../result';
import type { AccessTokenFilter, AccessTokenRow, NewAccessToken } from './types';
import type { LiveToken } from './user-fanout';
import { DirectoryUsers } from './users';

/** The SQL condition of a filter; GitLab's bounds: `<=`/`>=` for creation and use, strict for expiry. */
const accessTokenWhere = (f: AccessTokenFilter): { where: string; args: SqlStorageValue[] } => {
  const clauses: [string, SqlStorageValue | undefined][] = [
    ['user_id = ?', f.userId],
    ['impersonation = ?', f.impersonation === undefined ? undefined : Number(f.impersonation)],
    ['revoked = 0 AND expires_at > ?', f.state === 'active' ? f.now : undefined],
    ['(revoked = 1 OR expires_at <= ?)', f.state === 'inactive' ? f.now : undefined],
    ['revoked = ?', f.revoked === undefined ? undefined : Number(f.revoked)],
    ['instr(lower(name), lower(?)) > 0', f.search],
    ['created_at <= ?', f.createdBefore],
    ['created_at >= ?', f.createdAfter],
    ['last_used_at <= ?', f.lastUsedBefore],
    ['last_used_at >= ?', f.lastUsedAfter],
    ['expires_at < ?', f.expiresBefore],
    ['expires_at > ?', f.expiresAfter],
  ];
  const used = clauses.filter((c): c is [string, SqlStorageValue] => c[1] !== undefined);
  return { where: used.length ? used.map((c) => c[0]).join(' AND ') : '1', args: used.map((c) => c[1]) };
};

const ACCESS_TOKEN_COLUMNS = 'id, user_id, name, scopes, impersonation, created_at, expires_at, revoked, last_used_at';
type RawAccessToken = Omit<AccessTokenRow, 'scopes' | 'impersonation' | 'revoked'> & { scopes: string; impersonation: number; revoked: number };
const toAccessToken = (r: RawAccessToken): AccessTokenRow => ({
  ...r,
  scopes: r.scopes.split(' ').filter(Boolean),
  impersonation: r.impersonation === 1,
  revoked: r.revoked === 1,
});

/**
 * Personal access tokens and impersonation tokens: listed here, their records in KV (written and
 * revoked in their user's queue, `serial`).
 */
export abstract class DirectoryTokens extends DirectoryUsers {
  /**
   * A new personal or impersonation token of an active user: listed here, then its record (with
   * the user's profile as it is now) written to KV, in the user's queue, so a block or an edit
   * that commits meanwhile is fanned out after this write, never before it.
   */
  issueAccessToken(input: NewAccessToken): Promise<Result<AccessTokenRow>> {
    return this.serial(input.userId, async () => {
      const user = this.getUser(input.userId);
      if (!user || user.state !== 'active') return fail(problems.notFound('User'));
      const row = toAccessToken(
        this.sql
          .exec<RawAccessToken>(
            `INSERT INTO access_tokens (user_id, name, scopes, impersonation, token_hash, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${ACCESS_TOKEN_COLUMNS}`,
            input.userId,
            input.name,
            input.scopes.join(' '),
            input.impersonation ? 1 : 0,
            input.tokenHash,
            isoNow(),
            input.expiresAt,
          )
          .one(),
      );
      const token = { scopes: row.scopes, clientId: null, grantId: null, tokenId: row.id, createdAt: epochOf(row.created_at), expiresAt: row.expires_at };
      await putAccessToken(this.env, input.tokenHash, accessTokenRecord(user, token));
      return ok(row);
    });
  }

  /** Tokens that pass a filter, newest first. */
  listAccessTokens(filter: AccessTokenFilter, offset: number, limit: number): { total: number; tokens: AccessTokenRow[] } {
    const { where, args } = accessTokenWhere(filter);
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM access_tokens WHERE ${where}`, ...args).one().n;
    const tokens = this.sql
      .exec<RawAccessToken>(`SELECT ${ACCESS_TOKEN_COLUMNS} FROM access_tokens WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toAccessToken);
    return { total, tokens };
  }

  /** One token with the keyed hash that names it in KV, so revoking can end it there. */
  getAccessToken(id: number): (AccessTokenRow & { token_hash: string }) | null {
    const row = this.sql.exec<RawAccessToken & { token_hash: string }>(`SELECT ${ACCESS_TOKEN_COLUMNS}, token_hash FROM access_tokens WHERE id = ?`, id).toArray()[0];
    return row ? { ...toAccessToken(row), token_hash: row.token_hash } : null;
  }

  /** Records that a token was used at `at` (ISO 8601), unless a use at or after `since` is already recorded. */
  touchAccessToken(id: number, at: string, since: string): void {
    this.sql.exec('UPDATE access_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', at, id, since);
  }

  /**
   * Ends one token at once: KV gets its tombstone first, then the row is marked revoked, so a
   * failure in between leaves it listed as active (a retry revokes it), never usable. False when
   * it was revoked already.
   */
  revokeAccessToken(id: number): Promise<boolean> {
    const token = this.getAccessToken(id);
    if (!token) return Promise.resolve(false);
    return this.serial(token.user_id, async () => {
      const live = this.liveTokensOf(token.user_id).filter((t) => t.id === id);
      await revokeAccessTokens(this.env, live.map((t) => ({ hash: t.token_hash, expiresAt: t.expires_at })));
      return this.markRevoked([token]) > 0;
    });
  }

  /** A user's tokens that KV may still accept: not revoked, not expired. */
  protected liveTokensOf(userId: number): LiveToken[] {
    return this.sql
      .exec<{ id: number; token_hash: string; scopes: string; created_at: string; expires_at: number }>(
        'SELECT id, token_hash, scopes, created_at, expires_at FROM access_tokens WHERE user_id = ? AND revoked = 0 AND expires_at > ?',
        userId,
        epochSeconds(),
      )
      .toArray()
      .map((t) => ({ ...t, scopes: t.scopes.split(' ').filter(Boolean) }));
  }

  protected markRevoked(tokens: { id: number }[]): number {
    if (tokens.length === 0) return 0;
    return this.sql.exec('UPDATE access_tokens SET revoked = 1 WHERE revoked = 0 AND id IN (SELECT value FROM json_each(?)) RETURNING id', JSON.stringify(tokens.map((t) => t.id))).toArray().length;
  }
}
