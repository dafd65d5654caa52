import { defineConfig } from 'vitest/config';

// The bounded soak (`npm run test:soak`, scripts/soak.test.ts): about a minute of tens of users on a
// server of its own. A step of CI's of its own after `npm test` (.ci/run), so that `npm test` does not
// wait a minute for it; not one of vitest.config.ts's projects.
export default defineConfig({
  test: {
    name: 'soak',
    root: import.meta.dirname,
    include: ['scripts/soak.test.ts'],
    environment: 'node',
    hookTimeout: 180_000,
  },
});
