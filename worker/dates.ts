/**
 * Every date and time Knock reads from a client is parsed here, and nothing here throws: text that
 * is not a date or an instant that exists answers null, which the callers turn into GitLab's 400
 * (`expires_at is invalid`). `Date` is given only numbers already checked, so no `Invalid Date`
 * can reach `toISOString` (which throws a RangeError).
 *
 * Dates are ISO 8601 calendar dates in the proleptic Gregorian calendar, years 0000 to 9999;
 * instants are RFC 3339 date-times (ISO 8601's extended format), with the date-only and
 * offset-free forms GitLab's time filters also take, read as UTC.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/i;

const MINUTE_MS = 60_000;

const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number): number => (m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31);
const dateExists = (y: number, m: number, d: number): boolean => m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);

/** Epoch ms of a checked UTC date and time (`Date.UTC` would read years 0 to 99 as 1900 to 1999). */
const utcMs = (y: number, m: number, d: number, h = 0, min = 0, s = 0, ms = 0): number => {
  const at = new Date(0);
  at.setUTCFullYear(y, m - 1, d);
  at.setUTCHours(h, min, s, ms);
  return at.getTime();
};

/** A calendar date `YYYY-MM-DD` that exists (`2027-02-29` and `2027-13-45` do not), or null. */
export const parseDate = (text: string): string | null => {
  const m = DATE.exec(text);
  return m && dateExists(Number(m[1]), Number(m[2]), Number(m[3])) ? text : null;
};

/**
 * An instant (`2026-11-21`, `2026-11-21T12:00`, `2026-11-21T12:00:00.5+01:00`, …) normalised to
 * the stored form, UTC with milliseconds (`2026-11-21T11:00:00.500Z`), so it compares as text; or
 * null. Without an offset it is UTC.
 */
export const parseInstant = (text: string): string | null => {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [y, mo, d, h, min, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  const [offsetHours, offsetMinutes] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  if (!dateExists(y, mo, d) || h > 23 || min > 59 || s > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * MINUTE_MS;
  return new Date(utcMs(y, mo, d, h, min, s, ms) - offset).toISOString();
};

/** Epoch ms of 00:00 UTC on a date `parseDate` accepted. */
export const startOfDay = (date: string): number => {
  const [y, m, d] = date.split('-').map(Number);
  return utcMs(y, m, d);
};

/** The UTC calendar date (`YYYY-MM-DD`) of an instant in epoch ms. */
export const dateOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/**
 * When access should end, as a request or an approval gives it (`expires_at`): a date
 * `YYYY-MM-DD`, kept as it is (the access ends at 00:00 UTC that day, as GitLab's memberships
 * do), or an ISO 8601 date-time, kept to the minute (seconds dropped, so the end is never later
 * than asked) in the stored instant form `YYYY-MM-DDTHH:MM:00.000Z`; or null. Both forms compare
 * as text with each other and with `isoNow()`: a date sorts before every instant of its own day.
 */
export const parseEnd = (text: string): string | null => {
  if (DATE.test(text)) return parseDate(text);
  if (!/[T ]\d{2}:\d{2}/i.test(text)) return null;
  const instant = parseInstant(text);
  return instant === null ? null : `${instant.slice(0, 16)}:00.000Z`;
};

/** Whether an end `parseEnd` accepted is measured in hours (a date-time) rather than days. */
const isInstantEnd = (end: string): boolean => end.length > 10;

/** Epoch ms at which an end `parseEnd` accepted takes effect. */
export const endMs = (end: string): number => (isInstantEnd(end) ? Date.parse(end) : startOfDay(end));

/**
 * Whether an end `parseEnd` accepted has passed at `now` (epoch ms), so no request, approval or
 * membership may take it: a date before today (GitLab's FutureDateValidator,
 * app/validators/future_date_validator.rb, takes today: GitLab issue 12702), or a date-time not
 * after now.
 */
export const endHasPassed = (end: string, now: number): boolean => (isInstantEnd(end) ? endMs(end) <= now : end < dateOf(now));

/** An end `hours` after `epochMs`, to the minute (rounded down). */
export const endAfterHours = (epochMs: number, hours: number): string =>
  `${new Date(Math.floor((epochMs + hours * 3_600_000) / MINUTE_MS) * MINUTE_MS).toISOString().slice(0, 16)}:00.000Z`;

/**
 * SQL for when a member is warned that their access ends (the `expiring` event), from the end in
 * `column`: 24 hours before an end given as a date, 1 hour before one given as a date-time
 * (SQLite's time functions read both), as an instant that compares as text with `isoNow()`.
 */
export const warnAtSql = (column: string): string =>
  `CASE WHEN length(${column}) = 10 THEN strftime('%Y-%m-%dT%H:%M:%fZ', ${column}, '-1 day') ELSE strftime('%Y-%m-%dT%H:%M:%fZ', ${column}, '-1 hour') END`;
