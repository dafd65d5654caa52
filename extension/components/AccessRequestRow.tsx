import { useEffect, useRef, useState } from 'preact/hooks';
import { DEFAULT_APPROVAL_LEVEL, type NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import { When } from './When';
import { LevelPicker } from './LevelPicker';

interface Props {
  kind: NamespaceKind;
  approverLevel: number;
  request: AccessRequest;
  now: number;
  error?: string;
  /** Take keyboard focus (after the row before it was approved or denied, or this one failed). */
  focused: boolean;
  /** Ticked for the bulk bar. */
  selected: boolean;
  onSelect(checked: boolean): void;
  onApprove(level: number): void;
  onDeny(): void;
}

export function AccessRequestRow({ kind, approverLevel, request, now, error, focused, selected, onSelect, onApprove, onDeny }: Props) {
  const [level, setLevel] = useState(DEFAULT_APPROVAL_LEVEL);
  // Deny cannot be undone: it asks first, beside the request (as the console's confirmation page does).
  const [confirming, setConfirming] = useState(false);
  const decision = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focused) decision.current?.querySelector('select')?.focus();
  }, [focused]);
  // Focus follows the question: to its Deny, and back to the level after Cancel.
  const asked = useRef(false);
  useEffect(() => {
    if (confirming) asked.current = true;
    if (asked.current) decision.current?.querySelector<HTMLElement>(confirming ? 'button.deny' : 'select')?.focus();
  }, [confirming]);
  const who = `@${request.username}`;
  return (
    <li class="request" aria-label={`${request.name} (${who})`}>
      <input type="checkbox" class="select" aria-label={`Select ${who}'s request`} checked={selected} onChange={(event) => onSelect(event.currentTarget.checked)} />
      <div class="who">
        <span class="name">{request.name}</span> <span class="username">{who}</span>
        <div class="when">
          requested <When iso={request.requested_at} now={now} />
        </div>
      </div>
      {confirming ? (
        <div class="decision confirm" ref={decision}>
          <span class="question">Deny {who}'s request?</span>
          <button type="button" class="deny danger" aria-label={`Confirm: deny ${who}`} onClick={onDeny}>
            Deny
          </button>
          <button type="button" aria-label={`Keep ${who}'s request`} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
      <div class="decision" ref={decision}>
        <LevelPicker
          kind={kind}
          approverLevel={approverLevel}
          value={level}
          onChange={setLevel}
          label={`Access level for ${who}`}
        />
        <button type="button" class="approve primary" aria-label={`Approve ${who}`} onClick={() => onApprove(level)}>
          Approve
        </button>
        <button type="button" class="deny danger" aria-label={`Deny ${who}`} onClick={() => setConfirming(true)}>
          Deny
        </button>
      </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
