import { configDefaults, defineConfig } from 'vitest/config';

// `npm start` and its server as an operator meets them: started, stopped and started again on the
// same state (restart.test.ts), killed with SIGKILL under load (crash-restart.test.ts), the tour.
// Each file starts servers of its own on free ports and state directories of its own, so nothing
// here touches the system project's shared server, and `npm test` runs the two side by side (each
// one file at a time; test/run.mjs says why in two Vitest runs): most of either's time is spent
// waiting on servers and browsers. The bounded soak is a run of its own (`npm run test:soak`,
// ../vitest.soak.config.ts).
export default defineConfig({
  test: {
    name: 'scripts',
    root: import.meta.dirname,
    include: ['**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'soak.test.ts'],
    // As the system project's (../vitest.system.config.ts): servers' starts on a busy machine.
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
