import { describe, expect, it } from 'vitest';
import { afterFailure, alertStatus, ENABLED, type FailureState } from '../../worker/events/auto-disable';

const MINUTE = 60_000;

describe("GitLab's auto-disabling of a failing webhook", () => {
  it('rests after the 4th failure in a row for a minute, doubling to a day, and disables after the 40th', () => {
    let now = 0;
    let state: FailureState = ENABLED;
    const rests: number[] = [];
    for (let failure = 1; failure <= 40; failure++) {
      // Each failure comes once the previous rest is over (a resting hook is not sent to).
      now = Math.max(now, state.disabled_until ?? 0) + 1;
      expect(alertStatus(state, now)).toBe('executable');
      state = afterFailure(state, now);
      if (state.disabled_until !== null && state.disabled_until > now) rests.push(state.disabled_until - now);
      if (failure <= 3) expect(alertStatus(state, now)).toBe('executable');
      else if (failure < 40) expect(alertStatus(state, now)).toBe('temporarily_disabled');
    }
    expect(rests.slice(0, 6)).toEqual([1, 2, 4, 8, 16, 32].map((m) => m * MINUTE));
    expect(Math.max(...rests)).toBe(24 * 60 * MINUTE);
    expect(rests).toHaveLength(37);
    expect(alertStatus(state, now + 365 * 24 * 60 * MINUTE)).toBe('disabled');
  });

  it('does not count a failure while the hook rests, and starts again after a success', () => {
    const resting = afterFailure({ recent_failures: 3, disabled_until: null }, 0);
    expect(afterFailure(resting, 1)).toBe(resting);
    expect(alertStatus(resting, MINUTE + 1)).toBe('executable');
    expect(alertStatus(ENABLED, 0)).toBe('executable');
  });
});
