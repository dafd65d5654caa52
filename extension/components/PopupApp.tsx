import { useState } from 'preact/hooks';
import { accountItem, serverUrlItem } from '../lib/stored-values';
import { useStoredValue } from '../lib/use-stored-value';
import { PendingRequestsView } from './PendingRequestsView';
import type { PopupActions } from './popup-actions';
import { RequestAccessForm } from './RequestAccessForm';
import { SignedOutNotice } from './SignedOutNotice';

type View = 'pending' | 'request-access';

const VIEWS: { id: View; label: string }[] = [
  { id: 'pending', label: 'Pending requests' },
  { id: 'request-access', label: 'Request access' },
];

export function PopupApp({ actions, now = Date.now() }: { actions: PopupActions; now?: number }) {
  const account = useStoredValue(accountItem);
  const serverUrl = useStoredValue(serverUrlItem);
  const [view, setView] = useState<View>('pending');

  if (account === undefined || serverUrl === undefined) return <main class="popup" aria-busy="true" />;

  return (
    <main class="popup">
      <header>
        <h1>Knock</h1>
        {account && <span class="account">@{account.username}</span>}
        <button type="button" class="link" onClick={() => void actions.openOptions()}>
          Options
        </button>
      </header>
      {!account ? (
        <SignedOutNotice serverUrl={serverUrl} actions={actions} />
      ) : (
        <>
          <nav class="views" aria-label="Views">
            {VIEWS.map(({ id, label }) => (
              <button key={id} type="button" aria-pressed={view === id} onClick={() => setView(id)}>
                {label}
              </button>
            ))}
          </nav>
          {view === 'pending' ? <PendingRequestsView actions={actions} now={now} /> : <RequestAccessForm actions={actions} />}
        </>
      )}
    </main>
  );
}
