import { useEffect, useRef } from 'preact/hooks';
import { timeAgo } from '../lib/relative-time';
import { rowKey, useInbox } from '../lib/use-inbox';
import { AccessRequestRow } from './AccessRequestRow';
import type { PopupActions } from './popup-actions';
import { SourceSection } from './SourceSection';

export function PendingRequestsView({ actions, now }: { actions: PopupActions; now: number }) {
  const { inbox, refresh, reload, announcement, focusKey, errorFor, approve, deny } = useInbox(actions);
  const loading = refresh.status === 'loading';
  const status = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (focusKey === 'status') status.current?.focus();
  }, [focusKey]);

  return (
    <div class="pending" aria-busy={loading}>
      <p class="announcement" role="status" tabIndex={-1} ref={status}>
        {announcement}
      </p>
      {refresh.status === 'failed' && (
        <div class="refresh-error" role="alert">
          <p>
            {inbox ? 'Could not update the list: ' : 'Could not load access requests: '}
            {refresh.message}
          </p>
          <button type="button" onClick={() => void reload()}>
            Try again
          </button>
        </div>
      )}
      {!inbox && loading && <p class="loading">Loading access requests…</p>}
      {inbox && inbox.sources.length === 0 && (
        <p class="empty">No pending access requests. You're all caught up.</p>
      )}
      {inbox?.sources.map((source) => (
        <SourceSection key={`${source.kind}:${source.id}`} source={source}>
          {source.requests.map((request) => (
            <AccessRequestRow
              key={request.id}
              kind={source.kind}
              approverLevel={source.approverLevel}
              request={request}
              now={now}
              error={errorFor(source, request)}
              focused={focusKey === rowKey(source, request)}
              onApprove={(level) => void approve(source, request, level)}
              onDeny={() => void deny(source, request)}
            />
          ))}
        </SourceSection>
      ))}
      {inbox && (
        <p class="freshness">
          {loading ? 'Updating…' : `Updated ${timeAgo(new Date(inbox.fetchedAt).toISOString(), now)}`}
        </p>
      )}
    </div>
  );
}
