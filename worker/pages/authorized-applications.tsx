import { Hono, type MiddlewareHandler } from 'hono';
import { csrfTokenFor, type Session } from '../auth/session';
import type { Authorization } from '../durable/user/contract';
import { userObject } from '../durable/user/user';
import type { UserRow } from '../durable/directory/types';
import type { PageEnv } from '../auth/session';
import { findClient } from '../services/clients';
import { errorPage } from './error-page';
import { formCsrf } from './form-csrf';
import { CsrfField, Layout } from './layout';

interface Listed extends Authorization {
  name: string;
}

const PATH = '/oauth/authorized_applications';

const AuthorizedApplicationsPage = (p: { user: UserRow; csrf: string; applications: Listed[] }) => (
  <Layout title="Authorized applications" viewer={{ user: p.user, csrf: p.csrf }} wide>
    <div class="card">
      <h1>Authorized applications</h1>
      {p.applications.length === 0 ? (
        <p class="muted">You have not authorized any application.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Application</th>
              <th>Scopes</th>
              <th>Authorized</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {p.applications.map((a) => (
              <tr>
                <td>{a.name}</td>
                <td>{a.scopes.join(', ')}</td>
                <td>
                  <time datetime={a.authorizedAt}>{a.authorizedAt.slice(0, 16).replace('T', ' ')} UTC</time>
                </td>
                <td>
                  <form class="inline" method="post" action={`${PATH}/revoke`}>
                    <CsrfField token={p.csrf} />
                    <input type="hidden" name="client_id" value={a.clientId} />
                    <button class="danger" type="submit" aria-label={`Revoke ${a.name}`}>
                      Revoke
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
    <footer class="muted">
      Revoking an application signs it out: its tokens stop working and it must ask you again.
    </footer>
  </Layout>
);

/** Signed out: to the sign-in page first (before any form is read), then back to the list. */
const signedIn =
  (status: 302 | 303): MiddlewareHandler<PageEnv & { Variables: { session: Session } }> =>
  async (c, next) => {
    if (!c.var.session) return c.redirect(`/users/sign_in?return_to=${encodeURIComponent(PATH)}`, status);
    await next();
  };

/** The signed-in user's authorized applications, each with a Revoke button (like GitLab's). */
export const authorizedApplicationsPages = new Hono<PageEnv>()
  .get(PATH, signedIn(302), async (c) => {
    const session = c.var.session;
    const authorizations = await userObject(c.env, session.user.id).listAuthorizations();
    const applications: Listed[] = [];
    for (const a of authorizations) {
      const client = await findClient(c.env, a.clientId);
      if (client) applications.push({ ...a, name: client.name });
    }
    c.header('Cache-Control', 'no-store');
    return c.html(<AuthorizedApplicationsPage user={session.user} csrf={csrfTokenFor(c)} applications={applications} />);
  })
  .post(`${PATH}/revoke`, signedIn(303), formCsrf(), async (c) => {
    const clientId = c.var.form.client_id;
    if (typeof clientId !== 'string' || !clientId) return errorPage(c, 400, 'Invalid request', 'No application was chosen.');
    await userObject(c.env, c.var.session.user.id).revokeClient(clientId);
    return c.redirect(PATH, 303);
  });
