import { useEffect, useRef, useState } from 'preact/hooks';
import { ACCESS_LEVELS, DEFAULT_APPROVAL_LEVEL, levelsAllowedToApprove, type AccessLevel } from '../../shared/access-levels';
import type { Row } from '../lib/use-inbox';

interface Props {
  /** The rows shown, and those of them ticked. */
  shown: Row[];
  selected: Row[];
  onSelectAll(checked: boolean): void;
  onApprove(level: number): void;
  onDeny(): void;
}

/** The levels every selected row allows this approver to grant (shared/access-levels.ts). */
const commonLevels = (rows: Row[]): AccessLevel[] =>
  ACCESS_LEVELS.filter((level) => rows.every((r) => levelsAllowedToApprove(r.source.kind, r.source.approverLevel).some((l) => l.value === level.value)));

/**
 * Many requests at once: tick all shown, one level for "Approve selected", and "Deny selected",
 * which asks first as a row's Deny does. As the console's bulk form (worker/pages/bulk-requests.tsx).
 */
export function BulkBar({ shown, selected, onSelectAll, onApprove, onDeny }: Props) {
  const [level, setLevel] = useState(DEFAULT_APPROVAL_LEVEL);
  const [confirming, setConfirming] = useState(false);
  const [hint, setHint] = useState('');
  const bar = useRef<HTMLDivElement>(null);
  const levels = commonLevels(selected.length > 0 ? selected : shown);
  const chosen = levels.some((l) => l.value === level) ? level : (levels.at(-1)?.value ?? DEFAULT_APPROVAL_LEVEL);
  const none = selected.length === 0;
  const count = `${selected.length} ${selected.length === 1 ? 'request' : 'requests'}`;
  // Focus follows the question: to its Deny, and back to "Deny selected" after Cancel.
  const asked = useRef(false);
  useEffect(() => {
    if (confirming) asked.current = true;
    if (asked.current) bar.current?.querySelector<HTMLElement>(confirming ? 'button.danger' : 'button.deny-selected')?.focus();
  }, [confirming]);
  useEffect(() => {
    if (none) setConfirming(false);
    else setHint('');
  }, [none]);
  // The buttons stay enabled (a disabled one cannot be reached by keyboard): with nothing ticked they say so.
  const first = (then: () => void) => () => (none ? setHint('Select one or more requests first.') : then());
  return (
    <div class="bulk" ref={bar} role="group" aria-label="Selected requests">
      <label class="select-all">
        <input
          type="checkbox"
          checked={selected.length > 0 && selected.length === shown.length}
          onChange={(event) => onSelectAll(event.currentTarget.checked)}
        />{' '}
        Select all shown
      </label>
      {confirming ? (
        <div class="decision confirm">
          <span class="question">Deny {count}?</span>
          <button type="button" class="deny danger" onClick={() => (setConfirming(false), onDeny())}>
            Deny
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <div class="decision">
          <select class="level" aria-label="Access level for the selected requests" value={String(chosen)} onChange={(e) => setLevel(Number(e.currentTarget.value))}>
            {levels.map((l) => (
              <option key={l.value} value={String(l.value)}>
                {l.name}
              </option>
            ))}
          </select>
          <button type="button" class="approve primary" onClick={first(() => onApprove(chosen))}>
            Approve selected
          </button>
          <button type="button" class="deny-selected danger" onClick={first(() => setConfirming(true))}>
            Deny selected
          </button>
        </div>
      )}
      {hint && (
        <p class="hint" role="alert">
          {hint}
        </p>
      )}
    </div>
  );
}
