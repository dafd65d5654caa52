import { safeEqual, sha256Base64url } from '../auth/crypto';

/** RFC 7636 §4.2: an S256 challenge is BASE64URL(SHA256(verifier)): exactly 43 characters. */
export const isS256Challenge = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const isCodeVerifier = (value: string): boolean => /^[A-Za-z0-9\-._~]{43,128}$/.test(value);

/** RFC 7636 §4.2: S256 is BASE64URL(SHA256(ASCII(verifier))); computed before the grant authority's transaction. */
export const s256 = (verifier: string): Promise<string> => sha256Base64url(verifier);

/** RFC 7636 §4.6: the verifier's S256 transform equals the stored challenge (constant time). */
export const verifierMatches = (verifier: string, transformed: string, challenge: string): boolean =>
  isCodeVerifier(verifier) && safeEqual(transformed, challenge);
