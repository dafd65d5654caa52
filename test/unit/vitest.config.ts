import { defineConfig } from 'vitest/config';

// The pure rules (access policy, OAuth request checks, pagination, .dev.vars completion) in plain
// Node: no workerd, no browser, seconds to run. `npm run test:unit`.
export default defineConfig({
  test: {
    name: 'unit',
    root: import.meta.dirname,
    include: ['**/*.test.ts'],
    environment: 'node',
  },
});
