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

type RefreshState = { status: 'loading' } | { status: 'done' } | { status: 'failed'; message: string };

/** One request shown in the popup: on which server, for which group or project. */
export interface Row {
  serverUrl: ServerUrl;
  source: PendingSource;
  request: AccessRequest;
}

type Decision = { approveAs: number } | 'deny';

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

  /** Sends one decision; the row's error, or null. The background takes the row out of the stored inbox at once. */
  const send = useCallback(
    async (row: Row, decision: Decision): Promise<string | null> => {
      const { serverUrl, source, request } = row;
      const key = rowKey(serverUrl, source, request);
      const target = { serverUrl, kind: source.kind, sourceId: source.id, userId: request.id };
      setRowErrors(({ [key]: _dropped, ...others }) => others);
      sent.current.add(key);
      try {
        if (decision === 'deny') await actions.deny(target);
        else await actions.approve({ ...target, accessLevel: decision.approveAs });
        return null;
      } catch (error) {
        // The background has put the request back in the stored inbox; say why next to it.
        const message = `Could not ${decision === 'deny' ? 'deny' : 'approve'} @${request.username}: ${errorMessage(error)}`;
        setRowErrors((errors) => ({ ...errors, [key]: message }));
        return message;
      } finally {
        sent.current.delete(key);
      }
    },
    [actions],
  );

  /** Where focus goes once `keys` leave: the next row still there, or the status line. */
  const focusAfter = (keys: string[]) => {
    const order = rowOrder.current.filter((row) => keys.includes(row) || !sent.current.has(row));
    const last = Math.max(...keys.map((k) => order.indexOf(k)));
    const first = Math.min(...keys.map((k) => order.indexOf(k)));
    setFocusKey(order.slice(last + 1).find((k) => !keys.includes(k)) ?? order.slice(0, first).at(-1) ?? 'status');
  };

  const decide = useCallback(
    async (row: Row, decision: Decision) => {
      const key = rowKey(row.serverUrl, row.source, row.request);
      const who = `@${row.request.username}`;
      focusAfter([key]);
      const level = decision === 'deny' ? '' : accessLevelName(decision.approveAs);
      setAnnouncement(decision === 'deny' ? `Denying ${who}…` : `Approving ${who} as ${level}…`);
      const failed = await send(row, decision);
      if (failed) {
        setFocusKey(key);
        setAnnouncement(failed);
      } else setAnnouncement(decision === 'deny' ? `Denied ${who}'s request for ${row.source.fullPath}.` : `Approved ${who} as ${level} on ${row.source.fullPath}.`);
    },
    [send],
  );

  /** Many rows at once (the bulk bar): each through `send`, one after the other; one announcement for all. */
  const decideAll = useCallback(
    async (rows: Row[], decision: Decision) => {
      if (rows.length === 0) return;
      const n = (count: number) => `${count} ${count === 1 ? 'request' : 'requests'}`;
      const verb = decision === 'deny' ? 'Denied' : `Approved as ${accessLevelName(decision.approveAs)}:`;
      focusAfter(rows.map((r) => rowKey(r.serverUrl, r.source, r.request)));
      setAnnouncement(decision === 'deny' ? `Denying ${n(rows.length)}…` : `Approving ${n(rows.length)}…`);
      const failures: Row[] = [];
      for (const row of rows) if (await send(row, decision)) failures.push(row);
      const done = rows.length - failures.length;
      if (failures.length > 0) setFocusKey(rowKey(failures[0]!.serverUrl, failures[0]!.source, failures[0]!.request));
      setAnnouncement(`${verb} ${n(done)}.${failures.length > 0 ? ` ${n(failures.length)} could not be answered: see ${failures.length === 1 ? 'its row' : 'their rows'}.` : ''}`);
    },
    [send],
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
    approve: (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest, level: number) => decide({ serverUrl, source, request }, { approveAs: level }),
    deny: (serverUrl: ServerUrl, source: PendingSource, request: AccessRequest) => decide({ serverUrl, source, request }, 'deny'),
    approveAll: (rows: Row[], level: number) => decideAll(rows, { approveAs: level }),
    denyAll: (rows: Row[]) => decideAll(rows, 'deny'),
  };
}
