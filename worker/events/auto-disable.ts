/**
 * GitLab's auto-disabling of failing webhooks (app/models/concerns/web_hooks/auto_disabling.rb):
 * every failed delivery counts; after the 4th in a row the hook rests for a minute, the rest
 * doubling with each further failure up to a day; the 40th failure in a row disables it until
 * someone edits it. A success, or an edit, starts the count again.
 */

const TEMPORARILY_DISABLED_FAILURE_THRESHOLD = 3;
export const PERMANENTLY_DISABLED_FAILURE_THRESHOLD = 39;
const INITIAL_BACKOFF_MS = 60_000;
const MAX_BACKOFF_MS = 24 * 3600_000;

export interface FailureState {
  recent_failures: number;
  /** Epoch milliseconds. */
  disabled_until: number | null;
}

type AlertStatus = 'executable' | 'temporarily_disabled' | 'disabled';

const isPermanentlyDisabled = (s: FailureState): boolean => s.recent_failures > PERMANENTLY_DISABLED_FAILURE_THRESHOLD;

const isTemporarilyDisabled = (s: FailureState, now: number): boolean =>
  s.disabled_until !== null &&
  s.disabled_until >= now &&
  s.recent_failures > TEMPORARILY_DISABLED_FAILURE_THRESHOLD &&
  s.recent_failures <= PERMANENTLY_DISABLED_FAILURE_THRESHOLD;

export const alertStatus = (s: FailureState, now: number): AlertStatus =>
  isTemporarilyDisabled(s, now) ? 'temporarily_disabled' : isPermanentlyDisabled(s) ? 'disabled' : 'executable';

export const isExecutable = (s: FailureState, now: number): boolean => alertStatus(s, now) === 'executable';

/** After a failed delivery (GitLab's `backoff!`); a hook that is resting does not count failures. */
export const afterFailure = (s: FailureState, now: number): FailureState => {
  if (!isExecutable(s, now)) return s;
  const failures = Math.min(s.recent_failures + 1, PERMANENTLY_DISABLED_FAILURE_THRESHOLD + 1);
  if (failures <= TEMPORARILY_DISABLED_FAILURE_THRESHOLD) return { recent_failures: failures, disabled_until: s.disabled_until };
  const backoff = INITIAL_BACKOFF_MS * 2 ** (s.recent_failures - TEMPORARILY_DISABLED_FAILURE_THRESHOLD);
  return { recent_failures: failures, disabled_until: now + Math.min(Math.max(backoff, INITIAL_BACKOFF_MS), MAX_BACKOFF_MS) };
};

/** After a successful delivery, or an edit (GitLab's `enable!`). */
export const ENABLED: FailureState = { recent_failures: 0, disabled_until: null };
