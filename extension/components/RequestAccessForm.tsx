import { useState } from 'preact/hooks';
import { levelsAllowedToApprove, OWNER, type NamespaceKind } from '../../shared/access-levels';
import { serverName } from '../lib/server-url';
import type { Account } from '../lib/stored-values';
import { errorMessage, type PopupActions } from './popup-actions';

type Outcome = { ok: true; text: string } | { ok: false; text: string } | null;

/** How long the access should last: the presets offered, in hours (null: no end). */
const DURATIONS: readonly { label: string; hours: number | null }[] = [
  { label: '1 hour', hours: 1 },
  { label: '8 hours', hours: 8 },
  { label: '1 day', hours: 24 },
  { label: '1 week', hours: 168 },
  { label: '30 days', hours: 720 },
  { label: 'No end', hours: null },
];

/** Any signed-in user may ask for access to a group or project by its path, on a server they are signed in to. */
export function RequestAccessForm({ actions, accounts }: { actions: Pick<PopupActions, 'requestAccess'>; accounts: Account[] }) {
  const [chosenServer, setServer] = useState('');
  // The chosen server while still signed in there, else the first one.
  const serverUrl = (accounts.find((account) => account.serverUrl === chosenServer) ?? accounts[0])?.serverUrl ?? '';
  const [kind, setKind] = useState<NamespaceKind>('project');
  const [path, setPath] = useState('');
  const [reason, setReason] = useState('');
  // 0: no level asked (the approver chooses).
  const [level, setLevel] = useState(0);
  const [duration, setDuration] = useState(DURATIONS.length - 1);
  const [sending, setSending] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const target = path.trim();
    if (!target) {
      setOutcome({ ok: false, text: `Enter the path of the ${kind}, e.g. ${kind === 'group' ? 'acme' : 'acme/website'}.` });
      return;
    }
    setSending(true);
    setOutcome(null);
    try {
      const hours = DURATIONS[duration]?.hours ?? null;
      const answer = await actions.requestAccess({
        serverUrl,
        kind,
        path: target,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
        ...(level ? { accessLevel: level } : {}),
        ...(hours ? { hours } : {}),
      });
      const granted = 'approved_by_rule' in answer;
      setOutcome({ ok: true, text: granted ? `Access to ${kind} ${target} granted at once by its rules.` : `Access requested to ${kind} ${target}. Its owners will see your request.` });
      setPath('');
      setReason('');
    } catch (error) {
      setOutcome({ ok: false, text: `Could not request access to ${target}: ${errorMessage(error)}` });
    } finally {
      setSending(false);
    }
  }

  return (
    <form class="request-access" onSubmit={submit}>
      {accounts.length > 1 && (
        <label class="field">
          Server
          <select name="server" value={serverUrl} onChange={(event) => setServer(event.currentTarget.value)}>
            {accounts.map((account) => (
              <option key={account.serverUrl} value={account.serverUrl}>
                {serverName(account.serverUrl)} (@{account.username})
              </option>
            ))}
          </select>
        </label>
      )}
      <fieldset>
        <legend>Request access to</legend>
        {(['project', 'group'] as const).map((option) => (
          <label key={option} class="radio">
            <input
              type="radio"
              name="kind"
              value={option}
              checked={kind === option}
              onChange={() => setKind(option)}
            />
            {option === 'group' ? 'a group' : 'a project'}
          </label>
        ))}
      </fieldset>
      <label class="field">
        Path
        <input
          type="text"
          name="path"
          placeholder={kind === 'group' ? 'acme' : 'acme/website'}
          value={path}
          onInput={(event) => setPath(event.currentTarget.value)}
          autoComplete="off"
          spellcheck={false}
        />
      </label>
      <label class="field">
        Why
        <textarea name="reason" maxLength={1000} rows={2} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
      </label>
      <label class="field">
        Level
        <select name="access_level" value={String(level)} onChange={(event) => setLevel(Number(event.currentTarget.value))}>
          <option value="0">Any (the approver chooses)</option>
          {levelsAllowedToApprove(kind, OWNER).map((l) => (
            <option key={l.value} value={String(l.value)}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        For
        <select name="duration" value={String(duration)} onChange={(event) => setDuration(Number(event.currentTarget.value))}>
          {DURATIONS.map((d, i) => (
            <option key={d.label} value={String(i)}>
              {d.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={sending}>
        {sending ? 'Sending…' : 'Send request'}
      </button>
      {outcome && (
        <p class={outcome.ok ? 'success' : 'error'} role={outcome.ok ? 'status' : 'alert'}>
          {outcome.text}
        </p>
      )}
    </form>
  );
}
