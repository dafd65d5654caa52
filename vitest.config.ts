import { defineConfig } from 'vitest/config';

// Three suites, one `npm test`: the Worker inside workerd, the extension against WXT's fake
// browser, and system tests (real `wrangler dev`, Chromium) driven from Node.
export default defineConfig({
  test: {
    projects: ['test/*/vitest.config.ts', 'test/vitest.system.config.ts'],
  },
});
