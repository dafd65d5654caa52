import { useState } from 'preact/hooks';
import { hostPattern, normalizeServerUrl, serverName } from '../lib/server-url';
import {
  accountsItem,
  inboxItem,
  MIN_POLL_MINUTES,
  serversItem,
  settingsItem,
  type Account,
  type ServerInbox,
  type Settings,
} from '../lib/stored-values';
import { useStoredValue } from '../lib/use-stored-value';
import type { AddedServer } from '../lib/servers';
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

/** What a refused host permission leaves: the server listed, and this sentence saying what to do. */
const refusedText = (serverUrl: string) =>
  `Your browser did not let Knock reach ${serverName(serverUrl)}. Click “Allow access” next to it and allow it when the browser asks.`;

/**
 * Asks for the host permission (the browser prompts only for a host not yet allowed; the click
 * must still be under way, so this is called first), then tells the background.
 */
async function allowAndAdd(actions: OptionsActions, serverUrl: string): Promise<AddedServer> {
  const granted = await actions.requestHostPermission(hostPattern(serverUrl)).catch(() => false);
  const added = await actions.addServer(serverUrl);
  return { ...added, reachable: granted && added.reachable };
}

/** What adding a server says: that it is there, or why it is not ready. */
function addedMessage(added: AddedServer): Message {
  const name = serverName(added.serverUrl);
  if (!added.reachable) return { ok: false, text: refusedText(added.serverUrl) };
  if (added.problem) return { ok: false, text: `${name} is in the list, but it does not answer: ${added.problem}` };
  if (added.alreadyListed) return { ok: true, text: `${name} is already in the list.` };
  return { ok: true, text: `Added ${name}. Sign in to it with its “Sign in” button above.` };
}

function AddServerForm({ actions, accounts }: { actions: OptionsActions; accounts: Record<string, Account> }) {
  const [draft, setDraft] = useState('');
  const [added, setAdded] = useState<{ serverUrl: string; message: Message } | null>(null);
  const [invalid, setInvalid] = useState<Message>(null);

  function add(event: Event) {
    event.preventDefault();
    let serverUrl: string;
    try {
      serverUrl = normalizeServerUrl(draft);
    } catch (error) {
      setAdded(null);
      setInvalid({ ok: false, text: errorMessage(error) });
      return;
    }
    setInvalid(null);
    allowAndAdd(actions, serverUrl)
      .then((result) => {
        setDraft('');
        setAdded({ serverUrl, message: addedMessage(result) });
      })
      .catch((error: unknown) => setAdded({ serverUrl, message: { ok: false, text: errorMessage(error) } }));
  }

  // Once signed in to the server just added, "sign in to it" has been done: the message goes.
  const message = invalid ?? (added && !(added.message?.ok && accounts[added.serverUrl]) ? added.message : null);
  return (
    <form class="add-server" onSubmit={add}>
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
      <button type="submit">Add server</button>
      <p class="hint">
        Knock may reach servers on 127.0.0.1 and localhost from the start. For any other server, your browser asks
        you once to let Knock reach it.
      </p>
      <Feedback message={message} />
    </form>
  );
}

function ServerItem({
  serverUrl,
  account,
  inbox,
  actions,
}: {
  serverUrl: string;
  account: Account | undefined;
  inbox: ServerInbox | undefined;
  actions: OptionsActions;
}) {
  const name = serverName(serverUrl);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<Message>(null);
  const [pasting, setPasting] = useState(false);
  const [token, setToken] = useState('');

  async function run(work: () => Promise<unknown>, done?: string) {
    setBusy(true);
    setMessage(null);
    try {
      await work();
      if (done) setMessage({ ok: true, text: done });
    } catch (error) {
      setMessage({ ok: false, text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  }

  const problem = inbox?.problem;
  return (
    <li class="server" aria-label={name}>
      <p class="server-url">
        <strong>{serverUrl}</strong>
      </p>
      <p class={account ? 'signed-in' : 'signed-out'}>
        {account
          ? `Signed in as ${account.name} (@${account.username})${account.via === 'personal-access-token' ? ' with a personal access token' : ''}.`
          : 'Not signed in.'}
      </p>
      {problem && (
        <p class="error" role="alert">
          {problem.message}
        </p>
      )}
      <div class="actions">
        {problem?.kind === 'no-permission' && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                if (!(await allowAndAdd(actions, serverUrl)).reachable) throw new Error(refusedText(serverUrl));
              }, `Knock may reach ${name} now.`)
            }
          >
            Allow access
          </button>
        )}
        {account ? (
          <button type="button" aria-label={`Sign out of ${name}`} disabled={busy} onClick={() => void run(() => actions.signOut(serverUrl))}>
            Sign out
          </button>
        ) : (
          <>
            <button type="button" aria-label={`Sign in to ${name}`} disabled={busy} onClick={() => void run(() => actions.signIn(serverUrl))}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
            <button
              type="button"
              aria-label={`Use a personal access token for ${name}`}
              aria-expanded={pasting}
              disabled={busy}
              onClick={() => setPasting(!pasting)}
            >
              Use a personal access token
            </button>
          </>
        )}
        <button type="button" class="remove" aria-label={`Remove ${name}`} disabled={busy} onClick={() => void run(() => actions.removeServer(serverUrl))}>
          Remove
        </button>
      </div>
      {pasting && !account && (
        <form
          class="token-form"
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              await actions.usePersonalAccessToken({ serverUrl, token });
              setToken('');
              setPasting(false);
            });
          }}
        >
          <label class="field">
            Personal access token for {name}
            <input
              type="password"
              name="token"
              autoComplete="off"
              value={token}
              onInput={(event) => setToken(event.currentTarget.value)}
              required
            />
          </label>
          <button type="submit" disabled={busy}>
            Use token
          </button>
          <p class="hint">A token with the api scope, from the server's own pages. Knock keeps it until you sign out.</p>
        </form>
      )}
      <Feedback message={message} />
    </li>
  );
}

function ServersSection({ actions }: { actions: OptionsActions }) {
  const servers = useStoredValue(serversItem);
  const accounts = useStoredValue(accountsItem);
  const inbox = useStoredValue(inboxItem);
  if (servers === undefined || accounts === undefined || inbox === undefined) return <section aria-busy="true" />;
  return (
    <section aria-labelledby="servers-heading">
      <h2 id="servers-heading">Servers</h2>
      {servers.length === 0 ? (
        <p>No server yet. Add the address of your Knock server below.</p>
      ) : (
        <ul class="servers">
          {servers.map((serverUrl) => (
            <ServerItem key={serverUrl} serverUrl={serverUrl} account={accounts[serverUrl]} inbox={inbox[serverUrl]} actions={actions} />
          ))}
        </ul>
      )}
      <AddServerForm actions={actions} accounts={accounts} />
    </section>
  );
}

/** Settings changes are applied one after another, each to the stored value, so none is lost. */
let settingsWrites: Promise<void> = Promise.resolve();
function updateSettings(change: Partial<Settings>): void {
  settingsWrites = settingsWrites.then(async () => settingsItem.setValue({ ...(await settingsItem.getValue()), ...change }));
}

function NotificationSection() {
  const settings = useStoredValue(settingsItem);
  if (settings === undefined) return <section aria-busy="true" />;
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
            if (Number.isFinite(minutes) && minutes >= MIN_POLL_MINUTES) updateSettings({ pollMinutes: Math.min(minutes, 1440) });
          }}
        />
      </label>
      <label class="checkbox">
        <input
          type="checkbox"
          name="notificationsEnabled"
          checked={settings.notificationsEnabled}
          onChange={(event) => updateSettings({ notificationsEnabled: event.currentTarget.checked })}
        />
        Show a notification for each new request
      </label>
    </section>
  );
}

export function OptionsApp({ actions, redirectUri }: { actions: OptionsActions; redirectUri: string }) {
  return (
    <main class="options">
      <h1>Knock options</h1>
      <ServersSection actions={actions} />
      <NotificationSection />
      <details class="hint">
        <summary>If signing in fails with “Invalid redirect URI”</summary>
        Your Knock server has to allow this browser's address for signing in, <code>{redirectUri}</code>. Send it to the
        server's administrator.
      </details>
    </main>
  );
}
