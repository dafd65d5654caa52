import { afterEach } from 'vitest';
import { clock } from '../../../worker/clock';

// Importing this module gives the test file the real clock back after each test.
/** The real clock, as it was before any test moved it. */
export const realNow = clock.now;
/** Back to the real clock. */
export const resetClock = () => {
  clock.now = realNow;
};
afterEach(resetClock);

/** Moves the Worker's clock `seconds` ahead of where it is now (no sleeping). */
export const advance = (seconds: number) => {
  const base = clock.now();
  clock.now = () => base + seconds * 1000;
};
