import { hmacSha256, randomBytes } from '../auth/crypto';
import type { Env } from '../env';
import { tokenHashKey } from '../store/tokens';
import type { TokenResponse } from './token-response';

/**
 * The answer a refresh was given, kept for the identical-retry window (see User.retryOrRevoke).
 * It holds a live token pair, so it is encrypted with AES-GCM (NIST SP 800-38D, as WebCrypto
 * implements it) under a key derived from the refresh token that was presented: storage holds only
 * that token's keyed hash, so storage alone can never open it.
 */
export const retryKey = async (env: Env, refreshToken: string): Promise<CryptoKey> => {
  const raw = await hmacSha256(tokenHashKey(env), `retry-response:${refreshToken}`);
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
};

/** SP 800-38D §8.2: a 96-bit random IV, fresh for every sealing, stored in front of the ciphertext. */
const IV_BYTES = 12;

export const sealResponse = async (key: CryptoKey, response: TokenResponse): Promise<ArrayBuffer> => {
  const iv = randomBytes(IV_BYTES);
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(JSON.stringify(response)));
  const out = new Uint8Array(IV_BYTES + sealed.byteLength);
  out.set(iv);
  out.set(new Uint8Array(sealed), IV_BYTES);
  return out.buffer;
};

/** The sealed answer, or null when it does not open under this key. */
export const openResponse = async (key: CryptoKey, sealed: ArrayBuffer): Promise<TokenResponse | null> => {
  const bytes = new Uint8Array(sealed);
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, IV_BYTES) }, key, bytes.slice(IV_BYTES));
    return JSON.parse(new TextDecoder().decode(plain)) as TokenResponse;
  } catch {
    return null;
  }
};
