import { existsSync, statfsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * The tests' state on tmpfs when the machine has one with 2 GB free and TMPDIR is unset, as the bench's
 * (bench/lib/runtime.mjs): Miniflare keeps the worker project's runtime storage (every Durable
 * Object's SQLite database, KV, the rate limiters' counters) in a directory it makes under
 * `os.tmpdir()`, and the system project's servers keep theirs in directories made there too. On a
 * disk every committed write waits for its sync; nothing a test proves rests on the disk (the
 * state dies with the run, and a SIGKILLed server loses no write it made, on tmpfs as on a disk).
 * Measured back to back on the 2-core machine (docs/testing.md): matrix.test.ts and races.test.ts
 * 58–64 s of wall time on disk, 31–40 s on tmpfs; crash-restart.test.ts 66 s and 42 s.
 */
const TMPFS = '/dev/shm';
/** Room for a whole run's state (a few hundred MB) with margin: a container's default /dev/shm (64 MB) has not. */
const roomy = (dir: string) => {
  const { bavail, bsize } = statfsSync(dir);
  return bavail * bsize >= 2 ** 31;
};
if (!process.env.TMPDIR && existsSync(TMPFS) && roomy(TMPFS)) process.env.TMPDIR = TMPFS;

// One `npm test`: the pure rules and the objects' SQL in Node, the Worker inside workerd, the
// extension against WXT's fake browser, and the system and scripts tests (real `wrangler dev`,
// Chromium, Firefox) driven from Node.
export default defineConfig({
  test: {
    projects: ['test/*/vitest.config.ts', 'test/vitest.system.config.ts'],
  },
});
