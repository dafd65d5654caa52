import { useState } from 'preact/hooks';
import { normalizeServerUrl, originPattern } from '../lib/server-url';
import {
  accountItem,
  MIN_POLL_MINUTES,
  serverUrlItem,
  settingsItem,
  type Account,
  type Settings,
} from '../lib/stored-values';
import { useStoredValue } from '../lib/use-stored-value';
import { errorMessage, type OptionsActions } from './popup-actions';

type Message = { ok: boolean; text: string } | null;

function Feedback({ message }: { message: Message }) {
  if (!message) return null;
  return (
    <p class={message.ok ? 'success' : 'error'} role={message.ok ? 'status' : 'alert'}>
      {message.text}
    </p>
  );
}

function ServerSection({ saved, account, actions }: { saved: string; account: Account | null; actions: OptionsActions }) {
  const [draft, setDraft] = useState(saved);
  const [message, setMessage] = useState<Message>(null);
  // Show the saved address again whenever it changes (here or in another window).
  const [shown, setShown] = useState(saved);
  if (shown !== saved) {
    setShown(saved);
    setDraft(saved);
  }

  function save(event: Event) {
    event.preventDefault();
    let serverUrl: string;
    try {
      serverUrl = normalizeServerUrl(draft);
    } catch (error) {
      setMessage({ ok: false, text: errorMessage(error) });
      return;
    }
    // Asked straight away: browsers only show the prompt while the click is being handled.
    actions
      .requestHostPermission(originPattern(serverUrl))
      .then(async (granted) => {
        if (!granted) {
          setMessage({ ok: false, text: `Knock needs permission to reach ${serverUrl}. Nothing was saved.` });
          return;
        }
        if (account && serverUrl !== saved) await actions.signOut();
        await serverUrlItem.setValue(serverUrl);
        setDraft(serverUrl);
        setMessage({ ok: true, text: `Saved. Knock will talk to ${serverUrl}.` });
      })
      .catch((error: unknown) => setMessage({ ok: false, text: errorMessage(error) }));
  }

  return (
    <section aria-labelledby="server-heading">
      <h2 id="server-heading">Server</h2>
      <form onSubmit={save}>
        <label class="field">
          Server URL
          <input
            type="url"
            name="serverUrl"
            placeholder="https://knock.example.com"
            value={draft}
            onInput={(event) => setDraft(event.currentTarget.value)}
            required
          />
        </label>
        <button type="submit">Save</button>
      </form>
      <Feedback message={message} />
    </section>
  );
}

function AccountSection({
  serverUrl,
  account,
  actions,
  redirectUri,
}: {
  serverUrl: string;
  account: Account | null;
  actions: OptionsActions;
  redirectUri: string;
}) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<Message>(null);

  async function run(work: () => Promise<unknown>) {
    setBusy(true);
    setMessage(null);
    try {
      await work();
    } catch (error) {
      setMessage({ ok: false, text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Account</h2>
      {account ? (
        <>
          <p class="signed-in">
            Signed in as {account.name} (@{account.username}) on {account.serverUrl}.
          </p>
          <button type="button" disabled={busy} onClick={() => void run(() => actions.signOut())}>
            Sign out
          </button>
        </>
      ) : (
        <>
          <p>{serverUrl ? `Not signed in to ${serverUrl}.` : 'Save a server URL first.'}</p>
          <button type="button" disabled={busy || !serverUrl} onClick={() => void run(() => actions.signIn())}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </>
      )}
      <Feedback message={message} />
      <p class="hint">
        Knock sends you back to this browser at <code>{redirectUri}</code>; the server must list it in{' '}
        <code>EXTENSION_REDIRECT_URIS</code>.
      </p>
    </section>
  );
}

/** Settings changes are applied one after another, each to the stored value, so none is lost. */
let settingsWrites: Promise<void> = Promise.resolve();
function updateSettings(change: Partial<Settings>): void {
  settingsWrites = settingsWrites.then(async () => settingsItem.setValue({ ...(await settingsItem.getValue()), ...change }));
}

function NotificationSection({ settings }: { settings: Settings }) {
  const update = updateSettings;
  return (
    <section aria-labelledby="polling-heading">
      <h2 id="polling-heading">Checking for requests</h2>
      <label class="field">
        Check every (minutes)
        <input
          type="number"
          name="pollMinutes"
          min={MIN_POLL_MINUTES}
          max={1440}
          step={1}
          value={settings.pollMinutes}
          onChange={(event) => {
            const minutes = Math.round(Number(event.currentTarget.value));
            if (Number.isFinite(minutes) && minutes >= MIN_POLL_MINUTES) update({ pollMinutes: Math.min(minutes, 1440) });
          }}
        />
      </label>
      <label class="checkbox">
        <input
          type="checkbox"
          name="notificationsEnabled"
          checked={settings.notificationsEnabled}
          onChange={(event) => update({ notificationsEnabled: event.currentTarget.checked })}
        />
        Show a notification for each new request
      </label>
    </section>
  );
}

export function OptionsApp({ actions, redirectUri }: { actions: OptionsActions; redirectUri: string }) {
  const serverUrl = useStoredValue(serverUrlItem);
  const account = useStoredValue(accountItem);
  const settings = useStoredValue(settingsItem);
  if (serverUrl === undefined || account === undefined || settings === undefined) return <main aria-busy="true" />;
  return (
    <main class="options">
      <h1>Knock options</h1>
      <ServerSection saved={serverUrl} account={account} actions={actions} />
      <AccountSection serverUrl={serverUrl} account={account} actions={actions} redirectUri={redirectUri} />
      <NotificationSection settings={settings} />
    </main>
  );
}
