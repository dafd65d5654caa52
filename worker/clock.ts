import { dateOf } from './dates';

/**
 * The one source of "now" for the Worker and its Durable Objects. Tests replace `clock.now`
 * to move time forward instead of sleeping.
 */
export const clock = {
  now: (): number => Date.now(),
};

export const isoNow = (): string => new Date(clock.now()).toISOString();
export const epochSeconds = (): number => Math.floor(clock.now() / 1000);

/** Today's date in UTC (`YYYY-MM-DD`): a membership whose `expires_at` is today or earlier has ended. */
export const todayUtc = (): string => dateOf(clock.now());
