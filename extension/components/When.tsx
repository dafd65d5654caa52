import { exactTime, timeAgo } from '../../shared/relative-time';

/** An instant as the console shows it: in words ("3 minutes ago"), the exact time in UTC on hover. */
export function When({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={exactTime(iso)}>
      {timeAgo(iso, now)}
    </time>
  );
}
