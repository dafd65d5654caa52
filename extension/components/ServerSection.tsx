import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { timeAgo } from '../../shared/relative-time';
import { serverName } from '../lib/server-url';
import type { Account, ServerInbox } from '../lib/stored-values';
import { errorMessage, type PopupActions } from './popup-actions';

interface Props {
  serverUrl: string;
  account: Account | undefined;
  inbox: ServerInbox | undefined;
  loading: boolean;
  now: number;
  actions: Pick<PopupActions, 'signIn' | 'openOptions'>;
  onRetry(): void;
  /** The server's groups and projects with requests. */
  children: ComponentChildren;
}

/** One server: who is signed in there, what is wrong with it if anything, and its requests. */
export function ServerSection({ serverUrl, account, inbox, loading, now, actions, onRetry, children }: Props) {
  const name = serverName(serverUrl);
  const problem = inbox?.problem;
  return (
    <section class="server" aria-label={name}>
      <h2>
        {name} {account && <span class="account">@{account.username}</span>}
      </h2>
      {problem?.kind === 'no-permission' ? (
        <div class="problem" role="alert">
          <p>{problem.message}</p>
          <button type="button" onClick={() => void actions.openOptions()}>
            Open options
          </button>
        </div>
      ) : !account ? (
        <SignedOut serverUrl={serverUrl} reason={problem?.message} actions={actions} />
      ) : (
        problem && (
          <div class="problem" role="alert">
            <p>
              {problem.kind === 'unreachable' ? `${name} is not answering (${problem.message}).` : problem.message}
              {inbox?.fetchedAt && inbox.sources.length > 0
                ? ` These are the requests it listed ${timeAgo(new Date(inbox.fetchedAt).toISOString(), now)}.`
                : ''}
            </p>
            {problem.kind !== 'rate-limited' && (
              <button type="button" disabled={loading} onClick={onRetry}>
                Try again
              </button>
            )}
          </div>
        )
      )}
      {account && !problem && !inbox?.fetchedAt && loading && <p class="loading">Loading access requests…</p>}
      {account && !problem && inbox?.fetchedAt && inbox.sources.length === 0 && (
        <p class="empty">No pending access requests here.</p>
      )}
      {account && children}
    </section>
  );
}

function SignedOut({ serverUrl, reason, actions }: { serverUrl: string; reason?: string; actions: Props['actions'] }) {
  const [error, setError] = useState('');
  return (
    <div class="signed-out">
      <p>{reason ?? `You are signed out of ${serverName(serverUrl)}.`}</p>
      <button
        type="button"
        onClick={() => {
          setError('');
          actions.signIn(serverUrl).catch((failure: unknown) => setError(errorMessage(failure)));
        }}
      >
        Sign in
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
