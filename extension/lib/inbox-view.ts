// What the popup shows of a server's list: filtered by text (the group's or project's path and
// title, the requester's username and name, in any case) and sorted as the console's dashboard
// sorts (worker/durable/user/inbox.ts `INBOX_SORTS`). Sources stay grouped under their server.

import type { AccessRequest } from '../../shared/api-types';
import type { PendingSource } from './pending-requests';

export const SORTS = [
  { id: 'oldest', label: 'Oldest first' },
  { id: 'newest', label: 'Newest first' },
  { id: 'requester', label: 'Requester' },
  { id: 'source', label: 'Group or project' },
] as const;
export type Sort = (typeof SORTS)[number]['id'];

const byText = (a: string, b: string) => a.localeCompare(b, 'en', { sensitivity: 'base' });
const byTime = (a: AccessRequest, b: AccessRequest) => a.requested_at.localeCompare(b.requested_at);

const REQUEST_ORDER: Record<Sort, (a: AccessRequest, b: AccessRequest) => number> = {
  oldest: byTime,
  newest: (a, b) => byTime(b, a),
  requester: (a, b) => byText(a.username, b.username) || byTime(a, b),
  source: byTime,
};

/** A source's place in the list: by its path, or by its first request in the chosen order. */
const SOURCE_ORDER: Record<Sort, (a: PendingSource, b: PendingSource) => number> = {
  oldest: (a, b) => REQUEST_ORDER.oldest(a.requests[0]!, b.requests[0]!),
  newest: (a, b) => REQUEST_ORDER.newest(a.requests[0]!, b.requests[0]!),
  requester: (a, b) => REQUEST_ORDER.requester(a.requests[0]!, b.requests[0]!),
  source: (a, b) => byText(a.fullPath, b.fullPath),
};

/** The sources with the requests `text` matches (all of a source's when its path or title does), in `sort`'s order. */
export function shownSources(sources: PendingSource[], text: string, sort: Sort): PendingSource[] {
  const q = text.trim().toLowerCase();
  const has = (s: string) => s.toLowerCase().includes(q);
  return sources
    .map((source) => {
      const whole = q === '' || has(source.fullPath) || has(source.title);
      const requests = (whole ? source.requests : source.requests.filter((r) => has(r.username) || has(r.name))).slice().sort(REQUEST_ORDER[sort]);
      return { ...source, requests };
    })
    .filter((source) => source.requests.length > 0)
    .sort(SOURCE_ORDER[sort]);
}
