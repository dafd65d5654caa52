// The popup's list: the cached inbox at once, then the server's answer; approvals and denials
// applied optimistically and rolled back when the server refuses.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { accessLevelName } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import type { PopupActions } from '../components/popup-actions';
import { errorMessage } from '../components/popup-actions';
import type { Inbox, PendingSource } from './pending-requests';
import { requestKey } from './pending-requests';
import { inboxItem } from './stored-values';

export type RefreshState = { status: 'loading' } | { status: 'done' } | { status: 'failed'; message: string };

export const rowKey = (source: PendingSource, request: AccessRequest) =>
  `${requestKey(source, request.id)}:${request.requested_at}`;

export function useInbox(actions: PopupActions) {
  const [inbox, setInbox] = useState<Inbox | null | undefined>(undefined);
  const [refresh, setRefresh] = useState<RefreshState>({ status: 'loading' });
  /** Rows approved or denied in this popup: hidden at once, shown again if the server refuses. */
  const [settling, setSettling] = useState<ReadonlySet<string>>(new Set());
  const [rowErrors, setRowErrors] = useState<Readonly<Record<string, string>>>({});
  const [announcement, setAnnouncement] = useState('');
  /** Where keyboard focus goes after a row leaves: the next row, or `status` when none is left. */
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const rowOrder = useRef<string[]>([]);

  const reload = useCallback(async () => {
    setRefresh({ status: 'loading' });
    try {
      setInbox(await actions.refreshInbox());
      setRefresh({ status: 'done' });
    } catch (error) {
      setRefresh({ status: 'failed', message: errorMessage(error) });
    }
  }, [actions]);

  useEffect(() => {
    let active = true;
    void inboxItem.getValue().then((cached) => {
      if (active) setInbox((current) => (current === undefined ? cached : current));
    });
    const unwatch = inboxItem.watch((next) => setInbox(next));
    void reload();
    return () => {
      active = false;
      unwatch();
    };
  }, [reload]);

  const decide = useCallback(
    async (source: PendingSource, request: AccessRequest, decision: { approveAs: number } | 'deny') => {
      const key = rowKey(source, request);
      const who = `@${request.username}`;
      const target = { kind: source.kind, sourceId: source.id, userId: request.id };
      const verb = decision === 'deny' ? 'deny' : 'approve';
      const order = rowOrder.current;
      const at = order.indexOf(key);
      setFocusKey(order[at + 1] ?? order[at - 1] ?? 'status');
      setSettling((keys) => new Set(keys).add(key));
      setRowErrors(({ [key]: _dropped, ...others }) => others);
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
        const message = `Could not ${verb} ${who}: ${errorMessage(error)}`;
        setSettling((keys) => {
          const rest = new Set(keys);
          rest.delete(key);
          return rest;
        });
        setRowErrors((errors) => ({ ...errors, [key]: message }));
        setFocusKey(key);
        setAnnouncement(message);
      }
    },
    [actions],
  );

  const visible: PendingSource[] | undefined = inbox?.sources
    .map((source) => ({ ...source, requests: source.requests.filter((r) => !settling.has(rowKey(source, r))) }))
    .filter((source) => source.requests.length > 0);
  rowOrder.current = visible?.flatMap((source) => source.requests.map((request) => rowKey(source, request))) ?? [];

  return {
    /** `undefined` until the cache was read; `null` when nothing was ever fetched. */
    inbox,
    visible,
    refresh,
    reload,
    announcement,
    focusKey,
    errorFor: (source: PendingSource, request: AccessRequest) => rowErrors[rowKey(source, request)],
    approve: (source: PendingSource, request: AccessRequest, level: number) =>
      decide(source, request, { approveAs: level }),
    deny: (source: PendingSource, request: AccessRequest) => decide(source, request, 'deny'),
  };
}
