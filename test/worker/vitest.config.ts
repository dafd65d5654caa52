import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: '../../wrangler.toml' },
      miniflare: {
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
    // The first request of a file starts the Worker in workerd, which takes seconds on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    include: ['**/*.test.ts'],
    root: import.meta.dirname,
    // Fuzzing knobs (test/worker/fuzz*.test.ts): FUZZ_RUNS=5000 for a longer local run, FUZZ_SEED to replay.
    provide: { fuzzRuns: Number(process.env.FUZZ_RUNS) || 0, fuzzSeed: Number(process.env.FUZZ_SEED) || 0 },
  },
});
