import { describe, expect, it } from 'vitest';
import { base32, fromBase32, hotp, matchTotp, otpauthUri, totpStep } from '../../worker/auth/totp';

// RFC 6238 Appendix B: the SHA-1 seed is the ASCII string "12345678901234567890".
const SEED = new TextEncoder().encode('12345678901234567890');
const VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('at T = %i s gives the appendix B code %s', async (seconds, code) => {
    expect(await hotp(SEED, totpStep(seconds * 1000), 8)).toBe(code);
  });

  it('gives RFC 4226 appendix D HOTP values at six digits', async () => {
    const codes = await Promise.all([0, 1, 2, 9].map((c) => hotp(SEED, c)));
    expect(codes).toEqual(['755224', '287082', '359152', '520489']);
  });

  it('accepts the current step and one either side, and nothing further', async () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    for (const offset of [-1, 0, 1]) expect(await matchTotp(SEED, await hotp(SEED, step + offset), now, null)).toBe(step + offset);
    for (const offset of [-2, 2]) expect(await matchTotp(SEED, await hotp(SEED, step + offset), now, null)).toBeNull();
  });

  it('refuses a step already used, and any earlier one', async () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    expect(await matchTotp(SEED, await hotp(SEED, step), now, step)).toBeNull();
    expect(await matchTotp(SEED, await hotp(SEED, step - 1), now, step - 1)).toBeNull();
    expect(await matchTotp(SEED, await hotp(SEED, step + 1), now, step)).toBe(step + 1);
  });

  it('refuses what is not six digits', async () => {
    expect(await matchTotp(SEED, 'abcdef', 0, null)).toBeNull();
    expect(await matchTotp(SEED, '7552245', 0, null)).toBeNull();
  });

  it('writes the secret in RFC 4648 base32 and reads it back', () => {
    // RFC 4648 §10.
    expect(base32(new TextEncoder().encode('foobar'))).toBe('MZXW6YTBOI');
    expect(fromBase32('mzxw 6ytb oi')).toEqual(new TextEncoder().encode('foobar'));
    expect(fromBase32('not base32!')).toBeNull();
    expect(otpauthUri(SEED, 'carol', 'Knock')).toBe(
      `otpauth://totp/Knock:carol?secret=${base32(SEED)}&issuer=Knock&algorithm=SHA1&digits=6&period=30`,
    );
  });
});
