import { useState } from 'preact/hooks';
import type { NamespaceKind } from '../../shared/access-levels';
import { errorMessage, type PopupActions } from './popup-actions';

type Outcome = { ok: true; text: string } | { ok: false; text: string } | null;

/** Any signed-in user may ask for access to a group or project by its path. */
export function RequestAccessForm({ actions }: { actions: Pick<PopupActions, 'requestAccess'> }) {
  const [kind, setKind] = useState<NamespaceKind>('project');
  const [path, setPath] = useState('');
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
      await actions.requestAccess({ kind, path: target });
      setOutcome({ ok: true, text: `Access requested to ${kind} ${target}. Its owners will see your request.` });
      setPath('');
    } catch (error) {
      setOutcome({ ok: false, text: `Could not request access to ${target}: ${errorMessage(error)}` });
    } finally {
      setSending(false);
    }
  }

  return (
    <form class="request-access" onSubmit={submit}>
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
