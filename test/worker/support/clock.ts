import { clock } from '../../../worker/clock';

// Every test gets the real clock back after it (setup.ts, for every file).
/** The real clock, as it was before any test moved it. */
export const realNow = clock.now;
/** Back to the real clock. */
export const resetClock = () => {
  clock.now = realNow;
};

/** Moves the Worker's clock `seconds` ahead of where it is now (no sleeping). */
export const advance = (seconds: number) => {
  const base = clock.now();
  clock.now = () => base + seconds * 1000;
};

/**
 * Stops the Worker's clock where it is: what a test then issues and checks a second short of a
 * boundary (a 30-second window, an 8-hour expiry) is measured from one instant, not from two real
 * ones that may fall either side of a whole second.
 */
export const freeze = () => advance(0);
