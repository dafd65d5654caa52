import { defineConfig } from 'vitest/config';

// Tests that drive the real server (`npm start`'s wrangler dev) from outside, with real clients
// and browsers. One server is shared by the files that do not need their own
// (e2e/support/shared-knock.ts). The files that start, restart or kill servers of their own are
// the `scripts` project (scripts/vitest.config.ts), which `npm test` runs beside this one.
export default defineConfig({
  test: {
    name: 'system',
    root: import.meta.dirname,
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['e2e/support/shared-knock.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
