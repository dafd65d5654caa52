import type { Context } from 'hono';
import type { UserRow } from '../durable/directory/types';
import { isKnownScope, SCOPE_TABLE } from '../oauth/scopes';
import { CsrfField, Layout } from './layout';

interface ConsentProps {
  applicationName: string;
  /** Where the user is sent back; null for a device (RFC 8628), which sends no one back. */
  redirectHost: string | null;
  /** A device's user code, shown for the user to compare with the device's (RFC 8628 §5.4). */
  userCode?: string;
  scopes: string[];
  user: UserRow;
  csrf: string;
  /** Where the form posts: the authorization endpoint. */
  action: string;
  /** The authorization request, carried unchanged to the POST that answers it. */
  hidden: Record<string, string | null>;
}

const ConsentPage = (p: ConsentProps) => (
  <Layout title={`Authorize ${p.applicationName}`} viewer={{ user: p.user, csrf: p.csrf }}>
    <div class="card">
      <h1>Authorize {p.applicationName}?</h1>
      <p>
        <strong>{p.applicationName}</strong> wants to use your Knock account <strong>@{p.user.username}</strong> ({p.user.name}).
      </p>
      <p class="muted">It will be allowed to:</p>
      <ul class="scopes">
        {p.scopes.map((s) => (
          <li>
            <strong>{s}</strong>: {isKnownScope(s) ? SCOPE_TABLE[s].consent : s}
          </li>
        ))}
      </ul>
      {p.redirectHost === null ? (
        // RFC 8628 §5.4: the user is to confirm that they started this on a device of their own.
        <p class="muted">
          Authorize only if you started this on your own device and it shows the code <strong>{p.userCode}</strong>. You can revoke this later under Authorized applications.
        </p>
      ) : (
        <p class="muted">You will be sent back to {p.redirectHost}. You can revoke this later under Authorized applications.</p>
      )}
      <form method="post" action={p.action}>
        <CsrfField token={p.csrf} />
        {Object.entries(p.hidden).map(([name, value]) => (value === null ? null : <input type="hidden" name={name} value={value} />))}
        <div class="actions stretch">
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
          <button class="primary" type="submit" name="decision" value="authorize">
            Authorize
          </button>
        </div>
      </form>
    </div>
  </Layout>
);

/** The consent page of the authorization endpoint (application, scopes, signed-in user). */
export const consentPage = (c: Context, props: ConsentProps) => c.html(<ConsentPage {...props} />);
