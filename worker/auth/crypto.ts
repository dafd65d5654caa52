/** Hashing and secrets, all on WebCrypto. Nothing secret is stored or compared in clear. */
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from 'hono/utils/encode';

const encoder = new TextEncoder();

/** RFC 4648 §5 base64url without padding (as RFC 7636 Appendix A uses it): the one encoder of tokens and hashes. */
export const base64url = (bytes: Uint8Array | ArrayBuffer): string =>
  encodeBase64Url(bytes instanceof ArrayBuffer ? bytes : bytes.slice().buffer).replace(/=+$/, '');

/** The inverse of base64url (padding optional); throws on what is not base64url. */
export const fromBase64url = (s: string): Uint8Array<ArrayBuffer> => decodeBase64Url(s);

/** RFC 4648 §4 base64 with padding (Standard Webhooks' secrets and signatures). */
export const base64 = (bytes: Uint8Array | ArrayBuffer): string => encodeBase64(bytes instanceof ArrayBuffer ? bytes : bytes.slice().buffer);

/** The inverse of base64; throws on what is not base64. */
export const fromBase64 = (s: string): Uint8Array<ArrayBuffer> => {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new Error('not base64');
  return decodeBase64(s);
};

// Through a byte table: about ten times faster than toString(16) per byte, and keyedHash runs on
// every API call (the token lookup).
const HEX_BYTES = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
/** RFC 4648 §8 base16, lower case: the one hex encoder. */
export const hex = (bytes: Uint8Array | ArrayBuffer): string => {
  let out = '';
  for (const b of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) out += HEX_BYTES[b];
  return out;
};

export const randomBytes = (n: number): Uint8Array<ArrayBuffer> => crypto.getRandomValues(new Uint8Array(n));

/** A fresh secret with a recognisable prefix (for secret scanners), e.g. `knock_at_…`. */
export const randomToken = (prefix = '', bytes = 32): string => prefix + base64url(randomBytes(bytes));

/**
 * Constant-time string comparison (lengths may leak, contents do not): strings of different
 * lengths, in characters or in UTF-8 bytes, differ at once (`apiAuth` compares every presented
 * token with ADMIN_TOKEN).
 */
export const safeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false;
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
};

const hmacKeys = new Map<string, Promise<CryptoKey>>();
const hmacKey = (secret: string): Promise<CryptoKey> => {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    hmacKeys.set(secret, key);
  }
  return key;
};

/** RFC 2104 HMAC-SHA-256 of `value` under `secret`: 32 raw bytes. */
export const hmacSha256 = async (secret: string, value: string): Promise<ArrayBuffer> =>
  crypto.subtle.sign('HMAC', await hmacKey(secret), encoder.encode(value));

const rawHmacKeys = new Map<string, Promise<CryptoKey>>();
/** RFC 2104 HMAC-SHA-256 of `value` under a key given as bytes: 32 raw bytes. */
export const hmacSha256WithKey = async (key: Uint8Array<ArrayBuffer>, value: string): Promise<ArrayBuffer> => {
  const name = base64(key);
  let imported = rawHmacKeys.get(name);
  if (!imported) {
    if (rawHmacKeys.size >= 256) rawHmacKeys.clear();
    imported = crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    rawHmacKeys.set(name, imported);
  }
  return crypto.subtle.sign('HMAC', await imported, encoder.encode(value));
};

/** HMAC-SHA-256 of `value` under the deployment's token-hashing key, hex encoded. */
export const keyedHash = async (secret: string, value: string): Promise<string> => hex(await hmacSha256(secret, value));

export const sha256Base64url = async (value: string): Promise<string> =>
  base64url(await crypto.subtle.digest('SHA-256', encoder.encode(value)));

/** Workers cap PBKDF2 at 100,000 iterations: production's count (`PASSWORD_HASH_ITERATIONS`). */
export const MAX_PBKDF2_ITERATIONS = 100_000;

const pbkdf2 = async (password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<string> => {
  const key = await crypto.subtle.importKey('raw', encoder.encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, 256);
  return base64url(bits);
};

/**
 * `pbkdf2-sha256$<iterations>$<salt>$<hash>` (RFC 8018, PBKDF2 with HMAC-SHA-256), with a per-user
 * random salt. The count is recorded in the hash, so changing the count for new hashes leaves every
 * stored one verifiable.
 */
export const hashPassword = async (password: string, iterations: number): Promise<string> => {
  const salt = randomBytes(16);
  return `pbkdf2-sha256$${iterations}$${base64url(salt)}$${await pbkdf2(password, salt, iterations)}`;
};

/** Verifies against the hash's own iteration count; a hash not in this format (or with a count Workers refuse) matches nothing. */
export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, count, salt, hash] = stored.split('$');
  const iterations = Number(count);
  if (scheme !== 'pbkdf2-sha256' || !salt || !hash || !Number.isInteger(iterations) || iterations < 1 || iterations > MAX_PBKDF2_ITERATIONS) return false;
  return safeEqual(await pbkdf2(password, fromBase64url(salt), iterations), hash);
};

/**
 * A hash to verify against when a username does not exist, costing what a stored one made now
 * costs, so timing does not tell who exists.
 */
export const dummyPasswordHash = (iterations: number): string => `pbkdf2-sha256$${iterations}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
