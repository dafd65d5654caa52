import { INBOX_SORTS, type InboxFilter, type InboxSort } from '../durable/user/inbox';

/**
 * The filter and sort of a list of access requests, as a GET of its page (`?source=acme&requester=bo
 * &older_than=7&sort=newest`): the dashboard's inbox, and a group's or project's Access requests
 * tab (no source there). Read by the list's one read (worker/durable/user/inbox.ts `filterConditions`).
 */

/** Choices of the "older than" filter, in days. */
const AGES = [1, 7, 30];
const SORT_LABELS: Record<InboxSort, string> = { oldest: 'Oldest first', newest: 'Newest first', requester: 'Requester', source: 'Group or project' };

type Query = (name: string) => string | undefined;

/** The filter from the page's query; anything odd is ignored. */
export const requestFilterOf = (query: Query, now: number): InboxFilter => {
  const text = (name: string) => (query(name) ?? '').trim().slice(0, 100) || undefined;
  const days = Number(query('older_than'));
  const sort = query('sort');
  return {
    source: text('source'),
    requester: text('requester'),
    maxRequestedAt: AGES.includes(days) ? new Date(now - days * 24 * 3600 * 1000).toISOString() : undefined,
    sort: INBOX_SORTS.find((s) => s === sort),
  };
};

/** Whether the filter leaves some requests out (the empty list then says "matches"). */
export const filters = (f: InboxFilter): boolean => Boolean(f.source || f.requester || f.maxRequestedAt);

/** The filter's form: a GET of `action`; `sources`: with the group-or-project field and sort. */
export const RequestFilterForm = (p: { query: Query; action: string; label: string; sources?: boolean; hidden?: Record<string, string> }) => {
  const q = (name: string) => p.query(name) ?? '';
  return (
    <form method="get" action={p.action} class="filters" aria-label={p.label}>
      {Object.entries(p.hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      {p.sources ? (
        <div>
          <label for="filter-source">Group or project</label>
          <input type="search" id="filter-source" name="source" value={q('source')} placeholder="acme/website" />
        </div>
      ) : null}
      <div>
        <label for="filter-requester">Requester</label>
        <input type="search" id="filter-requester" name="requester" value={q('requester')} placeholder="name or username" />
      </div>
      <div>
        <label for="filter-age">Asked</label>
        <select id="filter-age" name="older_than">
          <option value="">any time</option>
          {AGES.map((d) => (
            <option value={String(d)} selected={q('older_than') === String(d)}>
              over {d === 1 ? 'a day' : `${d} days`} ago
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="filter-sort">Sort</label>
        <select id="filter-sort" name="sort">
          {INBOX_SORTS.filter((s) => p.sources || s !== 'source').map((s) => (
            <option value={s} selected={q('sort') === s}>
              {SORT_LABELS[s]}
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Filter</button>
    </form>
  );
};
