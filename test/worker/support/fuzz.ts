import fc from 'fast-check';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    fuzzRuns: number;
    fuzzSeed: number;
  }
}

/** CI's fixed seed; FUZZ_SEED replays another one. */
export const DEFAULT_SEED = 20261121;

/**
 * fast-check parameters: a fixed seed (so CI is deterministic) and `defaultRuns` cases unless
 * FUZZ_RUNS asks for more (`FUZZ_RUNS=5000 npx vitest run --project worker fuzz`).
 */
export const fuzzParameters = (defaultRuns: number): { seed: number; numRuns: number; endOnFailure: boolean } => ({
  seed: inject('fuzzSeed') || DEFAULT_SEED,
  numRuns: inject('fuzzRuns') || defaultRuns,
  endOnFailure: false,
});

/** A test timeout that grows with the number of cases (about 25 ms each on a slow machine). */
export const timeoutFor = (numRuns: number, msPerCase = 25) => 30_000 + numRuns * msPerCase;

let total = 0;
/** Counts and reports fuzz cases, for docs/testing.md. */
export const reportCases = (name: string, cases: number) => {
  total += cases;
  console.log(`fuzz: ${cases} cases (${name}); ${total} in this file`);
};

/** A path segment as hostile clients write them: odd encodings, traversal, unicode, huge. */
export const hostileSegment = (known: fc.Arbitrary<string>[] = []): fc.Arbitrary<string> =>
  fc.oneof(
    ...known.map((arbitrary) => ({ arbitrary, weight: 4 })),
    { arbitrary: fc.integer({ min: -3, max: 60 }).map(String), weight: 3 },
    {
      arbitrary: fc.constantFrom(
        '0', '-1', '1.5', '1e3', '0x10', '9007199254740993', '99999999999999999999999', 'NaN', 'Infinity',
        '%2F', '%00', '%0a', '..', '%2e%2e', '%2F..%2F', '..%2F..%2Fusers', 'a%2Fb%2Fc', '%E2%80%AE', '%F0%9F%92%A9',
        '%ff', '%c0%af', '%', '%%', '%zz', '%20', '+', ';', 'null', 'undefined', '[]', '{}', '%27%20OR%201%3D1--', '*', '\u00e9',
      ),
      weight: 3,
    },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }).map(encodeURIComponent), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 16 }).map(encodeURIComponent), weight: 1 },
    { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 16 }), weight: 1 },
    { arbitrary: fc.integer({ min: 2000, max: 9000 }).map((n) => 'a'.repeat(n)), weight: 1 },
  );

/** A query-string value: numbers (valid and not), strings, empties, huge. */
export const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -2, max: 120 }).map(String),
  fc.constantFrom('', '0', '5', '10', '15', '20', '30', '40', '50', '60', '1.5', '1e2', 'true', 'false', 'null', ' ', '%', '[]', '-0', '0x1e', '１'),
  fc.string({ unit: 'grapheme', maxLength: 24 }),
  fc.integer({ min: 2000, max: 6000 }).map((n) => '9'.repeat(n)),
);

/** A JSON body: any JSON value, an object of known fields with any values, or a malformed text. */
export const jsonBodies = (fields: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), weight: 2 },
    {
      arbitrary: fc
        .dictionary(fc.constantFrom(...fields), fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileValue), { maxKeys: 6 })
        .map((v) => JSON.stringify(v)),
      weight: 4,
    },
    {
      arbitrary: fc.constantFrom('{', '{"a":', '[1,2', 'nul', '{"a":1}}', '\u0000', '"unterminated', '{"access_level":}', '\ufeff{}', '{"a":1e999999}', '{"__proto__":{"admin":true}}'),
      weight: 1,
    },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 1 },
  );
