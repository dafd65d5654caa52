import { useEffect, useRef } from 'preact/hooks';
import { ownKind } from '../lib/own-requests';
import { timeAgo } from '../../shared/relative-time';
import type { Account, ServerUrl } from '../lib/stored-values';
import { rowKey, useInbox } from '../lib/use-inbox';
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
  const { inbox, refresh, reload, announcement, focusKey, errorFor, approve, deny } = useInbox(actions, servers);
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
          {inbox?.[serverUrl]?.sources.map((source) => (
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
