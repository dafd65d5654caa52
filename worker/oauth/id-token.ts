import { SignJWT } from 'jose';
import { base64url } from '../auth/crypto';
import { epochSeconds } from '../clock';
import type { Authentication } from '../durable/user/contract';
import type { Env } from '../env';
import type { GroupClaims } from '../store/tokens';
import { releasedClaims, userClaims } from './claims';
import { PROVIDER } from './provider';
import { currentSigningKey } from './signing-keys';

/** OpenID Connect Core 1.0 §3.1.3.6: the left half of SHA-256 of the access token (RS256's hash), base64url. */
const atHash = async (accessToken: string): Promise<string> =>
  base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken))).slice(0, 16));

interface IdTokenRequest {
  issuer: string;
  clientId: string;
  /** The scopes granted: which claims are released (provider.ts `CLAIMS`). */
  scopes: readonly string[];
  authentication: Authentication;
  accessToken: string;
  groups: GroupClaims;
}

/**
 * An id_token (OpenID Connect Core 1.0 §2, §3.1.3.3): a JWS signed with RS256 by the key that signs
 * now, named in the header by its `kid`, living PROVIDER.idTokenTtlSeconds. The claims are GitLab's,
 * read when it is issued; `auth_time` and `sid` are the browser session's, `nonce` the authorization
 * request's (a refreshed id_token leaves it out, §12.2).
 */
export const signIdToken = async (env: Env, r: IdTokenRequest): Promise<string> => {
  const now = epochSeconds();
  const [{ kid, key }, accessTokenHash] = await Promise.all([currentSigningKey(env), atHash(r.accessToken)]);
  const claims = releasedClaims('id_token', r.scopes, {
    ...userClaims(r.authentication.user, r.issuer, r.groups),
    iss: r.issuer,
    aud: r.clientId,
    iat: now,
    exp: now + PROVIDER.idTokenTtlSeconds,
    auth_time: r.authentication.authTime,
    nonce: r.authentication.nonce,
    sid: r.authentication.sid,
    at_hash: accessTokenHash,
  });
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key);
};
