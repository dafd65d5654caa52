import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

const WRANGLER = join(import.meta.dirname, '../../wrangler.toml');

/**
 * wrangler.toml's rate limits, raised out of reach: a test about something else never meets one.
 * The tests of the limits (rate-limits.test.ts) put TEST_TIGHT_LIMIT, 2 a minute, in their place.
 */
const ratelimits = Object.fromEntries(
  readFileSync(WRANGLER, 'utf8')
    .split(/^\[\[ratelimits\]\]$/m)
    .slice(1)
    .map((block) => [/^name = "(\w+)"/m.exec(block)![1], { namespace_id: /^namespace_id = "(\d+)"/m.exec(block)![1], simple: { limit: 1_000_000, period: 60 as const } }]),
);

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: '../../wrangler.toml' },
      miniflare: {
        ratelimits: { ...ratelimits, TEST_TIGHT_LIMIT: { namespace_id: '9999', simple: { limit: 2, period: 60 } } },
        bindings: {
          ADMIN_TOKEN: 'test-admin-token',
          TOKEN_HASH_KEY: 'test-token-hash-key',
          PUBLIC_URL: 'http://knock.test',
          // Production hashes passwords at 100,000 PBKDF2 iterations; a hundredth is as good a
          // test of every rule and saves most of each test user's cost.
          PASSWORD_HASH_ITERATIONS: '1000',
        },
      },
    }),
  ],
  test: {
    name: 'worker',
    // Test files share one runtime per Vitest worker (`npm test` runs two) instead of starting workerd for each file
    // (measured: half the CPU time and a third less wall time on 2 cores). So a file finds other
    // files' users, groups and events beside its own, and reads global views (an administrator's
    // inbox, the instance audit log, the users list) scoped to what it made; setupFiles gives
    // every test the real clock back.
    isolate: false,
    // The runtime starts the Worker before the first file runs (support/setup.ts); these budgets
    // are for a test's own work on a machine also running the other projects.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    include: ['**/*.test.ts'],
    root: import.meta.dirname,
    setupFiles: ['support/setup.ts'],
    // Fuzzing knobs (test/worker/fuzz*.test.ts): FUZZ_RUNS=5000 for a longer local run, FUZZ_SEED to replay.
    provide: { fuzzRuns: Number(process.env.FUZZ_RUNS) || 0, fuzzSeed: Number(process.env.FUZZ_SEED) || 0 },
  },
});
