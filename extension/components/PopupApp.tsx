import { useState } from 'preact/hooks';
import { accountsItem, serversItem } from '../lib/stored-values';
import { useStoredValue } from '../lib/use-stored-value';
import { PendingRequestsView } from './PendingRequestsView';
import type { PopupActions } from './popup-actions';
import { RequestAccessForm } from './RequestAccessForm';

type View = 'pending' | 'request-access';

const VIEWS: { id: View; label: string }[] = [
  { id: 'pending', label: 'Pending requests' },
  { id: 'request-access', label: 'Request access' },
];

export function PopupApp({ actions, now = Date.now() }: { actions: PopupActions; now?: number }) {
  const servers = useStoredValue(serversItem);
  const accounts = useStoredValue(accountsItem);
  const [view, setView] = useState<View>('pending');

  if (servers === undefined || accounts === undefined) return <main class="popup" aria-busy="true" />;
  const signedIn = servers.flatMap((serverUrl) => accounts[serverUrl] ?? []);

  return (
    <main class="popup">
      <header>
        <h1>Knock</h1>
        <button type="button" class="link" onClick={() => void actions.openOptions()}>
          Options
        </button>
      </header>
      {servers.length === 0 ? (
        <div class="signed-out">
          <p>Add your Knock server in the options to get started.</p>
          <button type="button" onClick={() => void actions.openOptions()}>
            Open options
          </button>
        </div>
      ) : (
        <>
          {signedIn.length > 0 && (
            <nav class="views" aria-label="Views">
              {VIEWS.map(({ id, label }) => (
                <button key={id} type="button" aria-pressed={view === id} onClick={() => setView(id)}>
                  {label}
                </button>
              ))}
            </nav>
          )}
          {view === 'request-access' && signedIn.length > 0 ? (
            <RequestAccessForm actions={actions} accounts={signedIn} />
          ) : (
            <PendingRequestsView actions={actions} servers={servers} accounts={accounts} now={now} />
          )}
        </>
      )}
    </main>
  );
}
