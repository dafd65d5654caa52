import { Hono } from 'hono';
import { NewApplicationSchema } from '../../api/applications';
import { directory } from '../../durable/directory/directory';
import { ApiError, problems, raise } from '../../errors';
import { SCOPES } from '../../oauth/scopes';
import { deleteApplication, registerApplication } from '../../services/applications';
import { act, formText, parseForm } from '../actions';
import { alertFor, Confirm, FieldError, FlashNotice, FormError, invalid, PostForm, Section } from '../components';
import { takeFlash, type Flash } from '../flash';
import { formCsrf } from '../form-csrf';
import { describeProblem } from '../problems';
import type { ConsoleEnv, PageContext } from '../viewer';
import { AdminLayout } from './nav';

const FORM = 'new-application';

interface Created {
  name: string;
  clientId: string;
  secret: string | null;
}

const ApplicationsPage = async (p: { c: PageContext; flash: Flash; created?: Created }) => {
  const { c, flash, created } = p;
  const csrf = c.var.viewer.csrf;
  const applications = await directory(c.env).listApplications();
  const alert = alertFor(flash, FORM);
  const v = alert ? flash.values ?? {} : {};
  return (
    <AdminLayout title="Applications" viewer={c.var.viewer} area="/admin/applications">
      <h1>OAuth applications</h1>
      <FlashNotice flash={flash} />
      {created ? (
        <div class="secret card" role="status">
          <p>
            <strong>{created.name}</strong> is registered.{' '}
            {created.secret ? 'Copy its secret now: it will not be shown again.' : 'It is a public client: it has no secret and must use PKCE.'}
          </p>
          <label for="created-client-id">Application ID (client_id)</label>
          <input type="text" id="created-client-id" readonly value={created.clientId} />
          {created.secret ? (
            <>
              <label for="created-secret">Secret (client_secret)</label>
              <input type="text" id="created-secret" readonly value={created.secret} />
            </>
          ) : null}
        </div>
      ) : null}
      <Section id="new-application" title="New application">
        <PostForm action="/admin/applications" csrf={csrf} label="New application">
          <label for="app-name">Name</label>
          <input type="text" id="app-name" name="name" required maxlength={255} value={v.name ?? ''} {...invalid('app-name', alert, 'name')} />
          <FieldError id="app-name" alert={alert} field="name" />
          <label for="app-redirect">Redirect URIs (one per line)</label>
          <textarea id="app-redirect" name="redirect_uri" required rows={3} {...invalid('app-redirect', alert, 'redirect_uri')}>
            {v.redirect_uri ?? ''}
          </textarea>
          <FieldError id="app-redirect" alert={alert} field="redirect_uri" />
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label class="choice">
                <input type="checkbox" name="scopes" value={s} checked={v.scopes ? v.scopes.split(' ').includes(s) : s === 'api'} /> {s}
              </label>
            ))}
            <FieldError id="app-scopes" alert={alert} field="scopes" />
          </fieldset>
          <label class="choice">
            <input type="checkbox" name="confidential" value="true" checked={v.confidential ? v.confidential === 'true' : true} /> Confidential (the
            application keeps a secret; leave unchecked for a browser or mobile app)
          </label>
          <label for="app-backchannel">Back-channel logout URI (optional)</label>
          <input type="url" id="app-backchannel" name="backchannel_logout_uri" maxlength={2048} value={v.backchannel_logout_uri ?? ''} {...invalid('app-backchannel', alert, 'backchannel_logout_uri')} />
          <FieldError id="app-backchannel" alert={alert} field="backchannel_logout_uri" />
          <label for="app-post-logout">Post-logout redirect URIs (one per line, optional)</label>
          <textarea id="app-post-logout" name="post_logout_redirect_uris" rows={2} {...invalid('app-post-logout', alert, 'post_logout_redirect_uris')}>
            {v.post_logout_redirect_uris ?? ''}
          </textarea>
          <FieldError id="app-post-logout" alert={alert} field="post_logout_redirect_uris" />
          <FormError alert={alert} fields={['name', 'redirect_uri', 'scopes', 'backchannel_logout_uri', 'post_logout_redirect_uris']} />
          <div class="actions">
            <button class="primary" type="submit">
              Register application
            </button>
          </div>
        </PostForm>
      </Section>
      <Section id="applications" title={`Applications (${applications.length})`}>
        {applications.length === 0 ? (
          <p class="muted">No application is registered.</p>
        ) : (
          <table>
            <caption class="visually-hidden">Registered applications</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Application ID</th>
                <th scope="col">Redirect URIs</th>
                <th scope="col">Scopes</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {applications.map((a) => (
                <tr>
                  <td>
                    {a.name} <span class="muted">{a.confidential ? 'confidential' : 'public'}</span>
                  </td>
                  <td>
                    <code>{a.client_id}</code>
                  </td>
                  <td>
                    {a.redirect_uris.map((u) => (
                      <div>
                        <code>{u}</code>
                      </div>
                    ))}
                  </td>
                  <td>
                    {a.scopes.join(', ')}
                    {a.backchannel_logout_uri ? (
                      <div class="muted">
                        Back-channel logout: <code>{a.backchannel_logout_uri}</code>
                      </div>
                    ) : null}
                    {a.post_logout_redirect_uris.map((u) => (
                      <div class="muted">
                        After logout: <code>{u}</code>
                      </div>
                    ))}
                  </td>
                  <td>
                    <a class="button danger" href={`/admin/applications/${a.id}/delete`} aria-label={`Delete ${a.name}`}>
                      Delete
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </AdminLayout>
  );
};

/** `/admin/applications`: register OAuth applications (the secret shown once) and delete them. */
export const adminApplicationPages = new Hono<ConsoleEnv>()
  .get('/admin/applications', async (c) => c.html(<ApplicationsPage c={c} flash={await takeFlash(c)} />))
  .post('/admin/applications', formCsrf({ all: true }), async (c) => {
    const form = c.var.form;
    const scopes = [form.scopes ?? []].flat().filter((s): s is string => typeof s === 'string').join(' ');
    const values = { name: formText(form, 'name'), redirect_uri: formText(form, 'redirect_uri'), scopes, confidential: formText(form, 'confidential') === 'true' ? 'true' : 'false',
      backchannel_logout_uri: formText(form, 'backchannel_logout_uri'),
      post_logout_redirect_uris: formText(form, 'post_logout_redirect_uris'),
    };
    try {
      const input = parseForm(NewApplicationSchema, values);
      const { application, secret } = await registerApplication(c.env, input);
      // The secret is shown on this answer only: storage keeps its keyed hash.
      c.header('Cache-Control', 'no-store');
      return c.html(<ApplicationsPage c={c} flash={{}} created={{ name: application.name, clientId: application.client_id, secret }} />, 201);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return c.html(<ApplicationsPage c={c} flash={{ alert: { form: FORM, ...describeProblem(e) }, values }} />, 400);
    }
  })
  .get('/admin/applications/:id{[0-9]+}/delete', async (c) => {
    const viewer = c.var.viewer;
    const application = (await directory(c.env).listApplications()).find((a) => a.id === Number(c.req.param('id'))) ?? raise(problems.notFound('Application'));
    return c.html(
      <AdminLayout title="Delete application" viewer={viewer} area="/admin/applications">
        <Confirm title={`Delete ${application.name}?`} action={c.req.path} csrf={viewer.csrf} returnTo="/admin/applications" confirmLabel={`Delete ${application.name}`}>
          <p>Every token it holds stops working, and everyone who authorized it is signed out of it. This cannot be undone.</p>
        </Confirm>
      </AdminLayout>,
    );
  })
  .post('/admin/applications/:id{[0-9]+}/delete', formCsrf(), (c) =>
    act(c, { form: FORM, returnTo: '/admin/applications' }, async () => {
      await deleteApplication(c.env, Number(c.req.param('id')));
      return 'Deleted the application and ended its tokens.';
    }),
  );
