import { useEffect, useRef, useState } from 'preact/hooks';
import { accessLevelName, DEFAULT_APPROVAL_LEVEL, levelsAllowedToApprove, type NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import { When } from './When';
import { endText } from '../lib/own-requests';
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
  // What was asked, when this approver may grant it: approving it is one click.
  const asked = request.access_level && levelsAllowedToApprove(kind, approverLevel).some((l) => l.value === request.access_level) ? request.access_level : null;
  const [level, setLevel] = useState(asked ?? DEFAULT_APPROVAL_LEVEL);
  // Deny cannot be undone: it asks first, beside the request (as the console's confirmation page does).
  const [confirming, setConfirming] = useState(false);
  const decision = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focused) decision.current?.querySelector('select')?.focus();
  }, [focused]);
  // Focus follows the question: to its Deny, and back to the level after Cancel.
  const questioned = useRef(false);
  useEffect(() => {
    if (confirming) questioned.current = true;
    if (questioned.current) decision.current?.querySelector<HTMLElement>(confirming ? 'button.deny' : 'select')?.focus();
  }, [confirming]);
  const who = `@${request.username}`;
  return (
    <li class="request" aria-label={`${request.name} (${who})`}>
      <input type="checkbox" class="select" aria-label={`Select ${who}'s request`} checked={selected} onChange={(event) => onSelect(event.currentTarget.checked)} />
      <div class="who">
        <span class="name">{request.name}</span> <span class="username">{who}</span>
        <div class="when">
          requested <When iso={request.requested_at} now={now} />
          {request.access_level ? ` · asks for ${accessLevelName(request.access_level)}` : ''}
          {request.expires_at ? ` · until ${endText(request.expires_at)}` : ''}
          {request.approvals_required > 1 ? ` · ${request.approvals.length} of ${request.approvals_required} approvals` : ''}
        </div>
        {request.reason && <blockquote class="reason">{request.reason}</blockquote>}
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
