import { hmacSha256, randomBytes } from '../auth/crypto';
import type { Env } from '../env';
import { tokenHashKey } from '../store/tokens';

/**
 * The answer a refresh was given, kept for the identical-retry window (see User.retryOrRevoke):
 * its two tokens, encrypted with AES-GCM (NIST SP 800-38D, as WebCrypto implements it) under a key
 * derived from the refresh token that was presented: storage holds only that token's keyed hash,
 * so storage alone can never open it. The rest of the answer (scope, lifetime, `created_at`) is the
 * new pair's own row. Sealing needs nothing from storage, so it is done before the rotation's
 * transaction reads anything.
 */
export interface SealedTokens {
  accessToken: string;
  refreshToken: string;
}

export const retryKey = async (env: Env, refreshToken: string): Promise<CryptoKey> => {
  const raw = await hmacSha256(tokenHashKey(env), `retry-response:${refreshToken}`);
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
};

/** SP 800-38D §8.2: a 96-bit random IV, fresh for every sealing, stored in front of the ciphertext. */
const IV_BYTES = 12;

export const sealTokens = async (key: CryptoKey, tokens: SealedTokens): Promise<ArrayBuffer> => {
  const iv = randomBytes(IV_BYTES);
  const plain = new TextEncoder().encode(JSON.stringify([tokens.accessToken, tokens.refreshToken]));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plain);
  const out = new Uint8Array(IV_BYTES + sealed.byteLength);
  out.set(iv);
  out.set(new Uint8Array(sealed), IV_BYTES);
  return out.buffer;
};

/** The sealed tokens, or null when they do not open under this key. */
export const openTokens = async (key: CryptoKey, sealed: ArrayBuffer): Promise<SealedTokens | null> => {
  const bytes = new Uint8Array(sealed);
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, IV_BYTES) }, key, bytes.slice(IV_BYTES));
    const [accessToken, refreshToken] = JSON.parse(new TextDecoder().decode(plain)) as [string, string];
    return { accessToken, refreshToken };
  } catch {
    return null;
  }
};
