import { randomToken } from '../auth/crypto';

/**
 * The codes of the device authorization grant (RFC 8628), as pure rules: the user code a person
 * types, and the device code the device polls with.
 */

/** GitLab's (doorkeeper-device_authorization_grant's) lifetime of a device authorization, and RFC 8628 §3.2's default interval. */
export const DEVICE_FLOW = {
  expiresInSeconds: 300,
  intervalSeconds: 5,
  /** RFC 8628 §3.5: `slow_down` adds 5 seconds to the interval, for this and every later poll. */
  slowDownSeconds: 5,
} as const;

/** RFC 8628 §4: the grant type of a poll at the token endpoint. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * RFC 8628 §6.1's example alphabet: 20 consonants, no vowels (no words are spelled) and nothing
 * that reads as a digit. Eight of them are 20^8 ≈ 2^34.6 codes; guesses are throttled per user
 * (worker/edge/rate-limits.ts) and a code lives five minutes, so a guesser's chance stays far below
 * RFC 8628 §5.1's bound.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A new user code, uniformly over the alphabet (rejection sampling: 256 is not a multiple of 20). */
export const newUserCode = (): string => {
  let code = '';
  const limit = 256 - (256 % USER_CODE_ALPHABET.length);
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(USER_CODE_LENGTH))) {
      if (byte < limit && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % USER_CODE_ALPHABET.length];
    }
  }
  return code;
};

/**
 * What a person typed, as the code it stands for (RFC 8628 §6.1: case-insensitive, the dash and
 * spaces left out), or null when it cannot be a user code.
 */
export const normalizeUserCode = (typed: string): string | null => {
  if (typed.length > 64) return null;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const ch of code) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return code;
};

/** A user code as shown: XXXX-XXXX. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

const DEVICE_CODE_PREFIX = 'knock_dc_';

/**
 * A device code naming the partition of the device authorizations that holds it
 * (`knock_dc_<partition>_<random>`, 256 random bits), so a poll reaches its object without a
 * lookup; only its keyed hash is stored.
 */
export const newDeviceCode = (partition: number): string => `${DEVICE_CODE_PREFIX}${partition}_${randomToken()}`;

/** The partition a device code names, or null when it is not one of ours. */
export const partitionOfDeviceCode = (deviceCode: string, partitions: number): number | null => {
  if (!deviceCode.startsWith(DEVICE_CODE_PREFIX)) return null;
  const m = /^(0|[1-9][0-9]{0,4})_[A-Za-z0-9_-]{16,}$/.exec(deviceCode.slice(DEVICE_CODE_PREFIX.length));
  if (!m) return null;
  const partition = Number(m[1]);
  return partition < partitions ? partition : null;
};
