import { useState } from 'preact/hooks';
import { errorMessage, type PopupActions } from './popup-actions';

/** What the popup shows without a session: where to sign in, or where to set the server first. */
export function SignedOutNotice({ serverUrl, actions }: { serverUrl: string; actions: PopupActions }) {
  const [error, setError] = useState('');
  if (!serverUrl) {
    return (
      <div class="signed-out">
        <p>Choose your Knock server in the options to get started.</p>
        <button type="button" onClick={() => void actions.openOptions()}>
          Open options
        </button>
      </div>
    );
  }
  return (
    <div class="signed-out">
      <p>
        You are signed out of <strong>{new URL(serverUrl).host}</strong>.
      </p>
      <button
        type="button"
        onClick={() => {
          setError('');
          actions.signIn().catch((failure: unknown) => setError(errorMessage(failure)));
        }}
      >
        Sign in
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
