import type { Context } from 'hono';
import type { UserRow } from '../durable/directory/types';
import { CsrfField, Layout } from './layout';

interface EndSessionProps {
  user: UserRow;
  csrf: string;
  /** The application that asked, when it said which (`client_id`). */
  applicationName: string | null;
  action: string;
  /** The logout request, carried unchanged to the POST that confirms it. */
  hidden: Record<string, string | null>;
}

/**
 * The end-session endpoint's question when the request does not prove which application sent it
 * (no valid `id_token_hint`: OpenID Connect RP-Initiated Logout 1.0 §2, "the OP SHOULD ask the
 * End-User whether to log out"): a form bound to the session's CSRF token.
 */
const EndSessionPage = (p: EndSessionProps) => (
  <Layout title="Sign out of Knock" viewer={{ user: p.user, csrf: p.csrf }}>
    <div class="card">
      <h1>Sign out of Knock?</h1>
      <p>
        {p.applicationName ? (
          <>
            <strong>{p.applicationName}</strong> asks to sign you out
          </>
        ) : (
          'You are asked to sign out'
        )}{' '}
        of your Knock account <strong>@{p.user.username}</strong> in this browser. Applications you signed in to with it are told.
      </p>
      <form method="post" action={p.action}>
        <CsrfField token={p.csrf} />
        {Object.entries(p.hidden).map(([name, value]) => (value === null ? null : <input type="hidden" name={name} value={value} />))}
        <div class="actions stretch">
          <a class="button" href="/">
            Stay signed in
          </a>
          <button class="primary" type="submit" name="decision" value="sign_out">
            Sign out
          </button>
        </div>
      </form>
    </div>
  </Layout>
);

export const endSessionPage = (c: Context, props: EndSessionProps) => c.html(<EndSessionPage {...props} />);
