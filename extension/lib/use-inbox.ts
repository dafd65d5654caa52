// The popup's lists, one per server: the stored inbox, written only by the background and watched here; approvals,
// denials and refreshes go to the background as commands, and their effect on the list comes back
// through storage. What the popup keeps is only what it alone shows: whether the refresh it asked
// for is under way or failed, the outcome it announces, errors next to rows, keyboard focus.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { accessLevelName } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import type { PopupActions } from '../components/popup-actions';
import { errorMessage } from '../components/popup-actions';
import type { PendingSource } from './pending-requests';
import { requestKey } from './pending-requests';
import { inboxItem, type ServerUrl } from './stored-values';
import { useStoredValue } from './use-stored-value';

export type RefreshState = { status: 'loading' } | { status: 'done' } | { status: 'failed'; message: string };

export const rowKey = (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest) =>
  `${requestKey(serverUrl, source, request.id)}:${request.requested_at}`;

/** `servers`: the servers in the order the popup lists them (keyboard focus follows it). */
export function useInbox(actions: PopupActions, servers: ServerUrl[]) {
  /** `undefined` until storage was read. */
  const inbox = useStoredValue(inboxItem);
  const [refresh, setRefresh] = useState<RefreshState>({ status: 'loading' });
  const [rowErrors, setRowErrors] = useState<Readonly<Record<string, string>>>({});
  const [announcement, setAnnouncement] = useState('');
  /** Where keyboard focus goes after a row leaves: the next row, or `status` when none is left. */
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const rowOrder = useRef<string[]>([]);
  /** Rows whose approval or denial was sent and not answered: focus does not go there. */
  const sent = useRef(new Set<string>());

  const reload = useCallback(async () => {
    setRefresh({ status: 'loading' });
    try {
      await actions.refreshInbox();
      setRefresh({ status: 'done' });
    } catch (error) {
      setRefresh({ status: 'failed', message: errorMessage(error) });
    }
  }, [actions]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const decide = useCallback(
    async (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest, decision: { approveAs: number } | 'deny') => {
      const key = rowKey(serverUrl, source, request);
      const who = `@${request.username}`;
      const target = { serverUrl, kind: source.kind, sourceId: source.id, userId: request.id };
      const order = rowOrder.current.filter((row) => row === key || !sent.current.has(row));
      const at = order.indexOf(key);
      setFocusKey(order[at + 1] ?? order[at - 1] ?? 'status');
      setRowErrors(({ [key]: _dropped, ...others }) => others);
      sent.current.add(key);
      try {
        if (decision === 'deny') {
          setAnnouncement(`Denying ${who}…`);
          await actions.deny(target);
          setAnnouncement(`Denied ${who}'s request for ${source.fullPath}.`);
        } else {
          const level = accessLevelName(decision.approveAs);
          setAnnouncement(`Approving ${who} as ${level}…`);
          await actions.approve({ ...target, accessLevel: decision.approveAs });
          setAnnouncement(`Approved ${who} as ${level} on ${source.fullPath}.`);
        }
      } catch (error) {
        // The background has put the request back in the stored inbox; say why next to it.
        const message = `Could not ${decision === 'deny' ? 'deny' : 'approve'} ${who}: ${errorMessage(error)}`;
        setRowErrors((errors) => ({ ...errors, [key]: message }));
        setFocusKey(key);
        setAnnouncement(message);
      } finally {
        sent.current.delete(key);
      }
    },
    [actions],
  );

  rowOrder.current = servers.flatMap((serverUrl) =>
    (inbox?.[serverUrl]?.sources ?? []).flatMap((source) => source.requests.map((request) => rowKey(serverUrl, source, request))),
  );

  return {
    inbox,
    refresh,
    reload,
    announcement,
    focusKey,
    errorFor: (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest) => rowErrors[rowKey(serverUrl, source, request)],
    approve: (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest, level: number) =>
      decide(serverUrl, source, request, { approveAs: level }),
    deny: (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest) => decide(serverUrl, source, request, 'deny'),
  };
}
