// "requested 2 hours ago": how long ago an instant was, in words, and the exact time for its hover text
// (the popup's When, extension/components/When.tsx, and the console's, worker/pages/components.tsx).

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

const format = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/** "2 hours ago", "in 3 days" (an expiry), or "just now" within a minute either way. */
export function timeAgo(iso: string, now: number): string {
  const delta = Math.round((now - Date.parse(iso)) / 1000);
  const seconds = Math.abs(delta);
  for (const [unit, size] of UNITS) {
    if (seconds >= size) return format.format((delta >= 0 ? -1 : 1) * Math.floor(seconds / size), unit);
  }
  return 'just now';
}

/** The exact instant, to the minute, in UTC ("2026-11-26 10:30 UTC"): the hover text of a relative time. */
export function exactTime(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}
