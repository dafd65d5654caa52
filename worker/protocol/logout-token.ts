/**
 * A logout token's claims (OpenID Connect Back-Channel Logout 1.0 §2.4): `iss`, `aud` (the client
 * id), `iat`, a short `exp`, a unique `jti`, the back-channel logout event, and `sub` and `sid`
 * (§2.4 requires at least one; Knock sends `sub` always and `sid` when the grant was given in a
 * browser session). Never a `nonce` (§2.4: forbidden, so it cannot be taken for an id_token).
 * Signed like id_tokens, with the `typ` header `logout+jwt` (§2.4, RFC 8725 §3.11).
 */

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';
/** §2.4 recommends a short life: two minutes, as id_tokens. */
const LOGOUT_TOKEN_TTL_SECONDS = 120;

interface LogoutTokenRequest {
  issuer: string;
  clientId: string;
  userId: number;
  sid: string | null;
  jti: string;
  /** Epoch seconds. */
  now: number;
}

export const logoutTokenClaims = (r: LogoutTokenRequest): Record<string, unknown> => ({
  iss: r.issuer,
  aud: r.clientId,
  iat: r.now,
  exp: r.now + LOGOUT_TOKEN_TTL_SECONDS,
  jti: r.jti,
  sub: String(r.userId),
  ...(r.sid !== null && { sid: r.sid }),
  events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
});
