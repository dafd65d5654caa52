import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The pure rules (access policy, OAuth request checks, pagination, .dev.vars completion) and the
// Durable Objects' SQL (on node:sqlite, test/unit/support/sql-storage.ts) in plain Node: no
// workerd, no browser, seconds to run. `npm run test:unit`.
export default defineConfig({
  resolve: {
    // The Durable Object base class, for objects run in Node on that storage.
    alias: { 'cloudflare:workers': join(import.meta.dirname, 'support', 'cloudflare-workers.ts') },
  },
  test: {
    name: 'unit',
    root: import.meta.dirname,
    include: ['**/*.test.ts'],
    environment: 'node',
    // One module graph per Vitest worker for all files, as the extension project does: the files
    // keep no state in modules between them (each object gets its own database), and a fresh graph
    // per file was half of the project's time (measured: 29 s against 13 s wall, 13 against 8 s CPU).
    isolate: false,
    // workerd's crypto.subtle.timingSafeEqual, for the Worker's constant-time compares.
    setupFiles: ['support/workerd-crypto.ts'],
    // Fuzzing knobs, as in the worker project (docs/testing.md): FUZZ_RUNS and FUZZ_SEED.
    provide: { fuzzRuns: Number(process.env.FUZZ_RUNS) || 0, fuzzSeed: Number(process.env.FUZZ_SEED) || 0 },
  },
});
