import { configDefaults, defineConfig } from 'vitest/config';

// Tests that start the real server (`npm start`'s wrangler dev) or a real browser. One server is
// shared by the files that do not need their own (e2e/support/shared-knock.ts). The bounded soak is
// a run of its own (`npm run test:soak`, vitest.soak.config.ts).
export default defineConfig({
  test: {
    name: 'system',
    root: import.meta.dirname,
    include: ['scripts/**/*.test.ts', 'e2e/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'scripts/soak.test.ts'],
    globalSetup: ['e2e/support/shared-knock.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
