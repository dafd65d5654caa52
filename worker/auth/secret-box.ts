import type { Env } from '../env';
import { tokenHashKey } from '../store/tokens';
import { base64url, fromBase64url, randomBytes } from './crypto';

/**
 * Secrets Knock must be able to use again later, so cannot keep as a keyed hash: a webhook's
 * secret token (sent back as `X-Gitlab-Token`) and its signing secret, and the private keys that
 * sign id_tokens (durable/signing-keys/). They are stored encrypted
 * with AES-256-GCM (NIST SP 800-38D) under a key derived from TOKEN_HASH_KEY with HKDF-SHA-256
 * (RFC 5869), so a copy of the storage alone opens nothing. The additional data names what the
 * secret belongs to, so a sealed value moved to another hook or field does not open.
 */

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

const boxKey = (secret: string): Promise<CryptoKey> => {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveKey'])
      .then((ikm) =>
        crypto.subtle.deriveKey(
          { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('knock'), info: encoder.encode('knock secret box v1') },
          ikm,
          { name: 'AES-GCM', length: 256 },
          false,
          ['encrypt', 'decrypt'],
        ),
      );
    keys.set(secret, key);
  }
  return key;
};

/** SP 800-38D §8.2: a 96-bit random IV, fresh for every sealing. */
const IV_BYTES = 12;

/** `v1.<iv>.<ciphertext>` (base64url) of `plain`, bound to `purpose`. */
export const seal = async (env: Env, purpose: string, plain: string): Promise<string> => {
  const iv = randomBytes(IV_BYTES);
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: encoder.encode(purpose) },
    await boxKey(tokenHashKey(env)),
    encoder.encode(plain),
  );
  return `v1.${base64url(iv)}.${base64url(sealed)}`;
};

/** The sealed secret, or null when it does not open (another key, another purpose, altered). */
export const open = async (env: Env, purpose: string, sealed: string): Promise<string | null> => {
  const [version, iv, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !data) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64url(iv), additionalData: encoder.encode(purpose) },
      await boxKey(tokenHashKey(env)),
      fromBase64url(data),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
};
