import { defineConfig } from 'vitest/config';

// Three suites, one `npm test`: the Worker inside workerd, the extension against WXT's fake
// browser, and system tests (real `wrangler dev`, Chromium) driven from Node.
export default defineConfig({
  test: {
    projects: ['test/*/vitest.config.ts', 'test/vitest.system.config.ts'],
    // Two test files at a time, whatever the core count (Vitest's default is one fewer than the
    // cores: one on a 2-core machine). A worker file's tests run in workerd, a system file's in
    // the server and browsers it drives, so the Vitest worker mostly waits: two keep both cores
    // busy. The system project still runs its files one at a time (fileParallelism: false).
    maxWorkers: 2,
  },
});
