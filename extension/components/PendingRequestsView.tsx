import { useEffect, useRef, useState } from 'preact/hooks';
import { ownKind } from '../lib/own-requests';
import { timeAgo } from '../../shared/relative-time';
import type { Account, ServerUrl } from '../lib/stored-values';
import { shownSources, SORTS, type Sort } from '../lib/inbox-view';
import { rowKey, useInbox, type Row } from '../lib/use-inbox';
import { BulkBar } from './BulkBar';
import { AccessRequestRow } from './AccessRequestRow';
import type { PopupActions } from './popup-actions';
import { OwnRequests } from './OwnRequests';
import { ServerSection } from './ServerSection';
import { SourceSection } from './SourceSection';

interface Props {
  actions: PopupActions;
  servers: ServerUrl[];
  accounts: Record<ServerUrl, Account>;
  now: number;
}

/** Every server's pending requests, one section per server: one server's trouble shows in its own section only. */
export function PendingRequestsView({ actions, servers, accounts, now }: Props) {
  const { inbox, refresh, reload, announcement, focusKey, errorFor, approve, deny, approveAll, denyAll } = useInbox(actions, servers);
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<Sort>('oldest');
  const [ticked, setTicked] = useState<ReadonlySet<string>>(new Set());
  const shown = Object.fromEntries(servers.map((serverUrl) => [serverUrl, shownSources(inbox?.[serverUrl]?.sources ?? [], filter, sort)]));
  const rows: Row[] = servers.flatMap((serverUrl) => shown[serverUrl]!.flatMap((source) => source.requests.map((request) => ({ serverUrl, source, request }))));
  // A row that left the list (answered, or filtered out) is no longer selected.
  const selected = rows.filter((r) => ticked.has(rowKey(r.serverUrl, r.source, r.request)));
  const tick = (keys: string[], on: boolean) =>
    setTicked((before) => {
      const next = new Set(before);
      for (const key of keys) on ? next.add(key) : next.delete(key);
      return next;
    });
  const answered = (chosen: Row[]) => setTicked(new Set([...ticked].filter((k) => !chosen.some((r) => rowKey(r.serverUrl, r.source, r.request) === k))));
  const anyRequests = servers.some((serverUrl) => (inbox?.[serverUrl]?.sources.length ?? 0) > 0);
  const loading = refresh.status === 'loading';
  const status = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (focusKey === 'status') status.current?.focus();
  }, [focusKey]);
  const fetchedAt = Math.max(0, ...Object.values(inbox ?? {}).map((list) => list.fetchedAt ?? 0));

  return (
    <div class="pending" aria-busy={loading}>
      <p class="announcement" role="status" tabIndex={-1} ref={status}>
        {announcement}
      </p>
      {refresh.status === 'failed' && (
        <div class="refresh-error" role="alert">
          <p>Could not update the lists: {refresh.message}</p>
          <button type="button" onClick={() => void reload()}>
            Try again
          </button>
        </div>
      )}
      {anyRequests && (
        <div class="tools">
          <input type="search" aria-label="Filter by group, project or requester" placeholder="Filter" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
          <select aria-label="Sort requests" value={sort} onChange={(e) => setSort(e.currentTarget.value as Sort)}>
            {SORTS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
      )}
      {anyRequests && rows.length === 0 && <p class="empty">No request matches “{filter}”.</p>}
      {rows.length > 0 && (
        <BulkBar
          shown={rows}
          selected={selected}
          onSelectAll={(on) => tick(rows.map((r) => rowKey(r.serverUrl, r.source, r.request)), on)}
          onApprove={(level) => (answered(selected), void approveAll(selected, level))}
          onDeny={() => (answered(selected), void denyAll(selected))}
        />
      )}
      {servers.map((serverUrl) => (
        <ServerSection
          key={serverUrl}
          serverUrl={serverUrl}
          account={accounts[serverUrl]}
          inbox={inbox?.[serverUrl]}
          loading={loading}
          now={now}
          actions={actions}
          onRetry={() => void reload()}
        >
          {shown[serverUrl]!.map((source) => (
            <SourceSection key={`${source.kind}:${source.id}`} serverUrl={serverUrl} source={source}>
              {source.requests.map((request) => (
                <AccessRequestRow
                  key={request.id}
                  kind={source.kind}
                  approverLevel={source.approverLevel}
                  request={request}
                  now={now}
                  error={errorFor(serverUrl, source, request)}
                  focused={focusKey === rowKey(serverUrl, source, request)}
                  selected={ticked.has(rowKey(serverUrl, source, request))}
                  onSelect={(on) => tick([rowKey(serverUrl, source, request)], on)}
                  onApprove={(level) => void approve(serverUrl, source, request, level)}
                  onDeny={() => void deny(serverUrl, source, request)}
                />
              ))}
            </SourceSection>
          ))}
          <OwnRequests
            serverUrl={serverUrl}
            requests={inbox?.[serverUrl]?.own ?? []}
            now={now}
            onWithdraw={(request) => actions.withdraw({ serverUrl, kind: ownKind(request), sourceId: request.source_id })}
          />
        </ServerSection>
      ))}
      {fetchedAt > 0 && (
        <p class="freshness">{loading ? 'Updating…' : `Updated ${timeAgo(new Date(fetchedAt).toISOString(), now)}`}</p>
      )}
    </div>
  );
}
