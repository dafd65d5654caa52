/**
 * Time-based one-time passwords (RFC 6238) over HOTP (RFC 4226), on WebCrypto's HMAC-SHA-1: the
 * codes any authenticator app shows for an `otpauth://` URI. A 30-second step, 6 digits, and a
 * window of one step either side for clocks that drift (RFC 6238 §5.2). A code is accepted once:
 * the caller remembers the last step used and passes it as `lastStep` (RFC 6238 §5.2, "the
 * verifier MUST NOT accept the second attempt of the same OTP").
 */
import { safeEqual } from './crypto';

/** RFC 6238 §4.1: X, the time step in seconds. */
const TOTP_STEP_SECONDS = 30;
const TOTP_DIGITS = 6;
/** RFC 6238 §5.2: steps accepted either side of the current one. */
const TOTP_WINDOW = 1;
/** RFC 4226 §4 R6: a shared secret of at least 128 bits; 160 as RFC 4226's own example. */
export const TOTP_SECRET_BYTES = 20;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6 base32 without padding: how authenticator apps take a secret. */
export const base32 = (bytes: Uint8Array): string => {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};

/** The inverse of base32 (case and spaces ignored); null for anything else. */
export const fromBase32 = (text: string): Uint8Array | null => {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const v = BASE32.indexOf(ch);
    if (v < 0) return null;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
};

/** RFC 6238 §4.2: the step a moment (ms since the epoch) falls in. */
export const totpStep = (ms: number): number => Math.floor(ms / 1000 / TOTP_STEP_SECONDS);

/** RFC 4226 §5.3: HOTP(K, C), dynamically truncated to `digits`. */
export const hotp = async (secret: Uint8Array, counter: number, digits = TOTP_DIGITS): Promise<string> => {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const key = await crypto.subtle.importKey('raw', secret.slice(), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
};

/**
 * The step within the window around `nowMs` whose code is `code`, if it is later than `lastStep`
 * (the last one used); null otherwise. Every candidate is computed and compared in constant time.
 */
export const matchTotp = async (secret: Uint8Array, code: string, nowMs: number, lastStep: number | null): Promise<number | null> => {
  const given = code.replace(/\s/g, '');
  if (!/^[0-9]{6}$/.test(given)) return null;
  const now = totpStep(nowMs);
  let found: number | null = null;
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    const equal = safeEqual(await hotp(secret, step), given);
    if (equal && (lastStep === null || step > lastStep) && found === null) found = step;
  }
  return found;
};

/**
 * The provisioning URI authenticator apps read (Google Authenticator's Key Uri Format, which
 * GitLab's enrolment QR code carries): `otpauth://totp/<issuer>:<account>?secret=…&issuer=…`.
 */
export const otpauthUri = (secret: Uint8Array, account: string, issuer: string): string => {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret: base32(secret), issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${label}?${query.toString()}`;
};
