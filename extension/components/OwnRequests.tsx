import { useState } from 'preact/hooks';
import type { OwnAccessRequest } from '../../shared/api-types';
import { outcomeText, ownKind } from '../lib/own-requests';
import { When } from './When';
import { serverName } from '../lib/server-url';
import { errorMessage } from './popup-actions';

interface Props {
  serverUrl: string;
  /** As the server listed them, oldest first. */
  requests: OwnAccessRequest[];
  now: number;
  onWithdraw(request: OwnAccessRequest): Promise<void>;
}

/** The user's own requests on one server: those pending (each can be withdrawn), then how the others ended, latest first. */
export function OwnRequests({ serverUrl, requests, now, onWithdraw }: Props) {
  const [errors, setErrors] = useState<Readonly<Record<string, string>>>({});
  if (requests.length === 0) return null;
  const ended = requests.filter((r) => r.status !== 'pending').sort((a, b) => (b.decided_at ?? '').localeCompare(a.decided_at ?? ''));
  const keyOf = (r: OwnAccessRequest) => `${r.source_type}:${r.source_id}:${r.requested_at}`;
  const withdraw = (request: OwnAccessRequest) => {
    const key = keyOf(request);
    setErrors(({ [key]: _dropped, ...others }) => others);
    onWithdraw(request).catch((error: unknown) =>
      setErrors((all) => ({ ...all, [key]: `Could not withdraw: ${errorMessage(error)}` })),
    );
  };
  return (
    <section class="own" aria-label={`Your requests on ${serverName(serverUrl)}`}>
      <h3>Your requests</h3>
      <ul class="requests">
        {[...requests.filter((r) => r.status === 'pending'), ...ended].map((request) => {
          const kind = ownKind(request);
          const key = keyOf(request);
          return (
            <li key={key} class={`request ${request.status}`} aria-label={`${kind} ${request.source_full_path}`}>
              <span class="kind">{kind === 'group' ? 'Group' : 'Project'}</span> {request.source_full_path}
              <div class="when">
                <span class="status">{outcomeText(request)}</span>,{' '}
                {request.decided_at ? <When iso={request.decided_at} now={now} /> : <>asked <When iso={request.requested_at} now={now} /></>}
              </div>
              {request.status === 'pending' && (
                <button type="button" class="deny danger" aria-label={`Withdraw your request for ${request.source_full_path}`} onClick={() => withdraw(request)}>
                  Withdraw
                </button>
              )}
              {errors[key] && (
                <p class="error" role="alert">
                  {errors[key]}
                </p>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
