import { epochSeconds } from '../clock';
import type { Caller, Env } from '../env';
import { problems, raise } from '../errors';
import { keyedHash, randomToken } from '../auth/crypto';

/** What KV keeps for one access token, under the keyed hash of the token (never the token). */
export interface AccessTokenRecord {
  userId: number;
  username: string;
  name: string;
  admin: boolean;
  scopes: string[];
  clientId: string | null;
  /** The grant (authorization) the token was issued under, for revocation and introspection. */
  grantId: string | null;
  /**
   * The Directory's row of a personal access token or impersonation token (for
   * `/personal_access_tokens/self` and `last_used_at`); null for OAuth tokens.
   */
  tokenId: number | null;
  /** Epoch seconds. */
  createdAt: number;
  expiresAt: number;
  /**
   * The user's profile as it was when the token was issued, so `GET /api/v4/user` (what clients
   * call first and most) is answered from this one KV read, without a Directory round trip.
   */
  email: string | null;
  userCreatedAt: string;
  /** Whether the user has a second factor (GitLab's `two_factor_enabled`). */
  twoFactorEnabled: boolean;
  /**
   * For an OAuth token granted `openid`: the user's group claims read when it was issued, which
   * `/oauth/userinfo` answers with (OpenID Connect Core 1.0 §5.3), so that costs this one read.
   */
  groups?: GroupClaims;
}

/**
 * The group claims of OpenID Connect as GitLab releases them (config/initializers/
 * doorkeeper_openid_connect.rb): `groups`, the full paths of every group the user is in, directly
 * or through an ancestor group; `groups_direct`, those they are a direct member of; and the direct
 * groups where they are exactly Owner, Maintainer or Developer. Computed by
 * worker/durable/user/group-claims.ts.
 */
export interface GroupClaims {
  groups: string[];
  groups_direct: string[];
  owner: string[];
  maintainer: string[];
  developer: string[];
}

/** What a token's record says besides the user. */
export type TokenFacts = Pick<AccessTokenRecord, 'scopes' | 'clientId' | 'grantId' | 'tokenId' | 'createdAt' | 'expiresAt' | 'groups'>;

/** Who a token's record says it was issued to: the fields of a user row the API answers from it. */
interface TokenUser {
  id: number;
  username: string;
  name: string;
  admin: boolean;
  email: string | null;
  created_at: string;
  two_factor_enabled: boolean;
}

/** The record of a token issued to `user`: who they are, and what the token may do until when. */
export const accessTokenRecord = (
  user: TokenUser,
  token: TokenFacts,
): AccessTokenRecord => ({
  userId: user.id,
  username: user.username,
  name: user.name,
  admin: user.admin,
  email: user.email,
  userCreatedAt: user.created_at,
  twoFactorEnabled: user.two_factor_enabled,
  ...token,
});

/** What replaces a revoked token's record, so the API can say "revoked" until it would have expired. */
interface Tombstone {
  revoked: true;
  expiresAt: number;
}

type StoredToken = AccessTokenRecord | Tombstone;

type TokenLookup =
  | { status: 'active'; record: AccessTokenRecord }
  | { status: 'expired' }
  | { status: 'revoked' }
  | { status: 'unknown' };

const ACCESS_TOKEN_PREFIX = 'knock_at_';
export const REFRESH_TOKEN_PREFIX = 'knock_rt_';
export const AUTHORIZATION_CODE_PREFIX = 'knock_ac_';

type RoutedPrefix = typeof REFRESH_TOKEN_PREFIX | typeof AUTHORIZATION_CODE_PREFIX;

/**
 * A code or refresh token that names the user whose grant authority holds it
 * (`knock_rt_<userId>_<random>`), so the token endpoint finds the right Durable Object without a
 * lookup. The user id is not a secret; the random part is, and only its keyed hash is stored.
 */
export const newRoutedSecret = (prefix: RoutedPrefix, userId: number): string => `${prefix}${userId}_${randomToken()}`;

/** The user id a code or refresh token routes to, or null when it is not one of ours. */
export const routeOf = (prefix: RoutedPrefix, secret: string): number | null => {
  if (!secret.startsWith(prefix)) return null;
  const m = /^([1-9][0-9]{0,14})_[A-Za-z0-9_-]{16,}$/.exec(secret.slice(prefix.length));
  return m ? Number(m[1]) : null;
};

// KV refuses expirations less than 60 seconds ahead.
const KV_MIN_TTL = 60;

/** The KV expiration of an entry that lives as long as a token expiring at `expiresAt` (epoch seconds). */
const kvExpiration = (expiresAt: number): number => Math.max(expiresAt, epochSeconds() + KV_MIN_TTL);

export const tokenHashKey = (env: Env): string => env.TOKEN_HASH_KEY || raise(problems.missingSecret('TOKEN_HASH_KEY'));

/** The keyed hash that identifies a token (or code, or secret) in storage. */
export const hashSecret = (env: Env, secret: string): Promise<string> => keyedHash(tokenHashKey(env), secret);

/**
 * A new access token. Its expiry rides along in clear (`knock_at_<exp>_<random>`) only so that
 * a token KV has already dropped can still be answered "expired" rather than "unknown".
 */
export const newAccessToken = (expiresAt: number): string => `${ACCESS_TOKEN_PREFIX}${expiresAt.toString(36)}_${randomToken()}`;

const embeddedExpiry = (token: string): number | null => {
  const m = /^knock_at_([0-9a-z]{1,12})_/.exec(token);
  return m ? parseInt(m[1], 36) : null;
};

const kvKey = (hash: string) => `at:${hash}`;

export const putAccessToken = async (env: Env, tokenHash: string, record: AccessTokenRecord): Promise<void> => {
  await env.TOKENS.put(kvKey(tokenHash), JSON.stringify(record), {
    expiration: kvExpiration(record.expiresAt),
  });
};

/** Replaces each token's entry by a tombstone that lives as long as the token would have. */
export const revokeAccessTokens = async (env: Env, tokens: { hash: string; expiresAt: number }[]): Promise<void> => {
  const tombstone = (expiresAt: number): Tombstone => ({ revoked: true, expiresAt });
  await Promise.all(
    tokens.map((t) =>
      env.TOKENS.put(kvKey(t.hash), JSON.stringify(tombstone(t.expiresAt)), {
        expiration: kvExpiration(t.expiresAt),
      }),
    ),
  );
};

/** The caller behind ADMIN_TOKEN, as a record of the same shape as a token's (never stored). */
export const rootRecord = (user: Parameters<typeof accessTokenRecord>[0]): AccessTokenRecord =>
  accessTokenRecord(user, { scopes: ['api'], clientId: null, grantId: null, tokenId: null, createdAt: epochOf(user.created_at), expiresAt: Number.MAX_SAFE_INTEGER });

/** Epoch seconds of an ISO 8601 timestamp. */
export const epochOf = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

export const lookupAccessToken = async (env: Env, token: string): Promise<TokenLookup> => {
  const record = await env.TOKENS.get<StoredToken>(kvKey(await hashSecret(env, token)), 'json');
  if (!record) {
    const exp = embeddedExpiry(token);
    return exp !== null && exp <= epochSeconds() ? { status: 'expired' } : { status: 'unknown' };
  }
  if ('revoked' in record) return { status: 'revoked' };
  if (record.expiresAt <= epochSeconds()) return { status: 'expired' };
  return { status: 'active', record };
};

export const callerOf = (record: AccessTokenRecord): Caller => ({
  id: record.userId,
  username: record.username,
  name: record.name,
  admin: record.admin,
  scopes: record.scopes,
  grantId: record.grantId,
  tokenId: record.tokenId,
  profile: { email: record.email, createdAt: record.userCreatedAt, twoFactorEnabled: record.twoFactorEnabled },
});
