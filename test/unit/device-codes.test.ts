// The codes of the device authorization grant (RFC 8628 §6.1): what a person may type, and where a
// device code leads.
import { describe, expect, it } from 'vitest';
import {
  formatUserCode,
  newDeviceCode,
  newUserCode,
  normalizeUserCode,
  partitionOfDeviceCode,
  USER_CODE_ALPHABET,
  USER_CODE_LENGTH,
} from '../../worker/protocol/device-codes';

describe('user codes', () => {
  it('are eight letters of the alphabet without vowels or look-alike letters, shown as XXXX-XXXX', () => {
    for (let i = 0; i < 200; i++) {
      const code = newUserCode();
      expect(code).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`));
      expect(formatUserCode(code)).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    }
    expect(USER_CODE_ALPHABET).not.toMatch(/[AEIOUY01]/);
  });

  it('use every letter of the alphabet equally: the last four letters get a fifth of the draws, not 12/256 each as bytes mod 20 would give', () => {
    const last = new Set(USER_CODE_ALPHABET.slice(-4));
    let letters = 0;
    let inLast = 0;
    for (let i = 0; i < 12_500; i++) {
      for (const ch of newUserCode()) {
        letters++;
        if (last.has(ch)) inLast++;
      }
    }
    // 100,000 letters: a fair draw gives 0.2 (σ 0.0013); bytes mod 20 would give 0.1875.
    expect(inLast / letters).toBeGreaterThan(0.1945);
    expect(inLast / letters).toBeLessThan(0.2055);
  });

  it('are read case-insensitively, with or without the dash and spaces; anything else is not a code', () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode(' BCDF GHJK ')).toBe('BCDFGHJK');
    expect(normalizeUserCode('BCDFGHJK')).toBe('BCDFGHJK');
    for (const typed of ['', 'BCDF-GHJ', 'BCDF-GHJKL', 'ABCD-EFGH', '1234-5678', 'BCDF_GHJK', 'x'.repeat(100)]) expect(normalizeUserCode(typed), typed).toBeNull();
  });
});

describe('device codes', () => {
  it('name their partition, and only a device code of a partition that exists is one', () => {
    const code = newDeviceCode(17);
    expect(partitionOfDeviceCode(code, 64)).toBe(17);
    expect(partitionOfDeviceCode(newDeviceCode(0), 64)).toBe(0);
    expect(partitionOfDeviceCode(code, 16)).toBeNull();
    expect(partitionOfDeviceCode(code.replace('knock_dc_', 'knock_rt_'), 64)).toBeNull();
    expect(partitionOfDeviceCode('knock_dc_017_AAAAAAAAAAAAAAAAAAAA', 64)).toBeNull();
    expect(partitionOfDeviceCode('knock_dc_1_short', 64)).toBeNull();
  });
});
