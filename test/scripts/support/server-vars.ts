/**
 * Variables every system test's server runs with, besides its own. PBKDF2 at 1,000 iterations
 * instead of production's 100,000 (wrangler.toml's `PASSWORD_HASH_ITERATIONS`): each password a
 * test sets or signs in with costs a hundredth, and hashes stored at another count (the
 * state-before-partitions fixture's, made at 100,000) still verify by the count they record.
 */
export const SYSTEM_TEST_VARS: Readonly<Record<string, string>> = { PASSWORD_HASH_ITERATIONS: '1000' };
