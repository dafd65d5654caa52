import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { NewImpersonationToken, issueImpersonationToken } from '../../api/impersonation-tokens';
import { NewUserSchema } from '../../api/users';
import { directory, type UserRow } from '../../durable/directory';
import { unwrap } from '../../durable/result';
import { ApiError, problems, raise } from '../../errors';
import { SCOPES } from '../../oauth/scopes';
import { createAccount } from '../../services/accounts';
import * as tokens from '../../services/access-tokens';
import { act, formText, parseForm, problemPage } from '../actions';
import { alertFor, FieldError, FlashNotice, FormError, invalid, Pagination, pageNumber, PostForm, Section, When, windowFor, tomorrowUtc } from '../components';
import { takeFlash, type Flash, type FormAlert } from '../flash';
import { formCsrf } from '../form-csrf';
import { describeProblem } from '../problems';
import type { ConsoleEnv, PageContext } from '../viewer';
import { AdminLayout } from './nav';
import { clock } from '../../clock';

const NEW_USER = 'new-user';
const NEW_TOKEN = 'new-token';

/** Users, 20 a page, oldest first; `search` as `GET /users?search=`. */
const UserList = async (p: { c: PageContext; search: string }) => {
  const { c } = p;
  const page = pageNumber(c.req.query('page'));
  const { offset, limit } = windowFor(page);
  const { total, users } = await directory(c.env).listUsers({ search: p.search || undefined }, offset, limit);
  return (
    <Section id="users" title={`Users (${total})`}>
      <form method="get" action="/admin/users" class="search" role="search">
        <label for="user-search">Search by username, name or email</label>
        <input type="search" id="user-search" name="search" value={p.search} />
        <button type="submit">Search</button>
      </form>
      <table>
        <caption class="visually-hidden">Users</caption>
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr>
              <td>
                <a href={`/admin/users/${u.id}`}>{u.name}</a> <span class="muted">@{u.username}</span>
              </td>
              <td>{u.email ?? ''}</td>
              <td>{u.admin ? 'Administrator' : 'User'}</td>
              <td>{u.state}</td>
              <td>
                <When iso={u.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pagination url={c.req.url} param="page" page={page} total={total} label="users" />
    </Section>
  );
};

const TextField = (p: { id: string; name: string; label: string; type?: string; value?: string; alert: FormAlert | null; required?: boolean; autocomplete?: string }) => (
  <div>
    <label for={p.id}>{p.label}</label>
    <input
      type={p.type ?? 'text'}
      id={p.id}
      name={p.name}
      value={p.value ?? ''}
      required={p.required}
      autocomplete={p.autocomplete ?? 'off'}
      {...invalid(p.id, p.alert, p.name)}
    />
    <FieldError id={p.id} alert={p.alert} field={p.name} />
  </div>
);

/** The form that creates a user (`POST /users`), with what was typed after an error (never the password). */
const NewUser = (p: { csrf: string; flash: Flash }) => {
  const alert = alertFor(p.flash, NEW_USER);
  const v = alert ? p.flash.values ?? {} : {};
  return (
    <Section id="new-user" title="New user">
      <PostForm action="/admin/users" csrf={p.csrf} label="New user">
        <div class="fields">
          <TextField id="new-username" name="username" label="Username" value={v.username} alert={alert} required />
          <TextField id="new-name" name="name" label="Full name" value={v.name} alert={alert} required />
          <TextField id="new-email" name="email" label="Email (optional)" type="email" value={v.email} alert={alert} />
          <TextField id="new-password" name="password" label="Password (at least 8 characters)" type="password" alert={alert} required autocomplete="new-password" />
        </div>
        <label class="choice">
          <input type="checkbox" name="admin" value="true" checked={v.admin === 'true'} /> Administrator
        </label>
        <FormError alert={alert} fields={['username', 'name', 'email', 'password']} />
        <div class="actions">
          <button class="primary" type="submit">
            Create user
          </button>
        </div>
      </PostForm>
    </Section>
  );
};

/** What an administrator sees of one user: the facts, and their impersonation tokens. */
interface UserView {
  c: PageContext;
  user: UserRow;
  flash: Flash;
  /** A token just issued, shown this once. */
  issued?: { name: string; token: string };
}

const Facts = (p: { view: UserView }) => {
  const u = p.view.user;
  return (
    <div class="card">
      <h1>
        {u.name} <span class="muted">@{u.username}</span>
      </h1>
      <dl class="facts">
        <dt>Email</dt>
        <dd>{u.email ?? 'none'}</dd>
        <dt>Role</dt>
        <dd>{u.admin ? 'Administrator' : 'User'}</dd>
        <dt>State</dt>
        <dd>{u.state}</dd>
        <dt>Created</dt>
        <dd>
          <When iso={u.created_at} />
        </dd>
      </dl>
    </div>
  );
};

/** Impersonation tokens: issue one (shown once), see them, revoke one (`/users/:id/impersonation_tokens`). */
const ImpersonationTokens = async (p: { view: UserView }) => {
  const { c, user, flash, issued } = p.view;
  const page = pageNumber(c.req.query('tokens_page'));
  const { total, tokens: rows } = await tokens.listAccessTokens(c.env, { userId: user.id, impersonation: true }, windowFor(page));
  const alert = alertFor(flash, NEW_TOKEN);
  const v = alert ? flash.values ?? {} : {};
  const csrf = c.var.viewer.csrf;
  return (
    <Section id="impersonation-tokens" title="Impersonation tokens">
      <p class="muted">A token acts as @{user.username} on the API. It is shown once, when it is made.</p>
      {issued ? (
        <div class="secret" role="status">
          <p>
            <strong>{issued.name}</strong>: copy this token now. It will not be shown again.
          </p>
          <label for="issued-token">Token</label>
          <input type="text" id="issued-token" readonly value={issued.token} />
        </div>
      ) : null}
      <PostForm action={`/admin/users/${user.id}/impersonation_tokens`} csrf={csrf} label="New impersonation token">
        <div class="fields">
          <TextField id="token-name" name="name" label="Token name" value={v.name} alert={alert} required />
          <div>
            <label for="token-expires">Expires (optional, default in 30 days)</label>
            <input type="date" id="token-expires" name="expires_at" value={v.expires_at ?? ''} min={tomorrowUtc(clock.now())} {...invalid('token-expires', alert, 'expires_at')} />
            <FieldError id="token-expires" alert={alert} field="expires_at" />
          </div>
        </div>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label class="choice">
              <input type="checkbox" name="scopes" value={s} checked={s === 'api'} /> {s}
            </label>
          ))}
          <FieldError id="token-scopes" alert={alert} field="scopes" />
        </fieldset>
        <FormError alert={alert} fields={['name', 'expires_at', 'scopes']} />
        <div class="actions">
          <button class="primary" type="submit">
            Create token
          </button>
        </div>
      </PostForm>
      {rows.length > 0 ? (
        <table>
          <caption class="visually-hidden">Impersonation tokens of @{user.username}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr>
                <td>{t.name}</td>
                <td>{t.scopes.join(', ')}</td>
                <td>
                  <When iso={t.created_at} />
                </td>
                <td>{new Date(t.expires_at * 1000).toISOString().slice(0, 10)}</td>
                <td>
                  {tokens.isActive(t) ? (
                    <PostForm action={`/admin/users/${user.id}/impersonation_tokens/${t.id}/revoke`} csrf={csrf} class="inline">
                      <button class="danger" type="submit" aria-label={`Revoke ${t.name}`}>
                        Revoke
                      </button>
                    </PostForm>
                  ) : t.revoked ? (
                    'revoked'
                  ) : (
                    'expired'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No impersonation tokens.</p>
      )}
      <Pagination url={c.req.url} param="tokens_page" page={page} total={total} label="impersonation tokens" />
    </Section>
  );
};

/**
 * The sections of a user's administration page, in order, each one component. Editing,
 * blocking and deleting a user come with their services, as entries here.
 */
const USER_SECTIONS: FC<{ view: UserView }>[] = [Facts, ImpersonationTokens];

const userPage = <E extends ConsoleEnv>(c: Context<E>, view: UserView, status: 200 | 201 | 400 = 200) =>
  c.html(
    <AdminLayout title={`@${view.user.username}`} viewer={c.var.viewer} area="/admin/users">
      <p>
        <a href="/admin/users">All users</a>
      </p>
      <FlashNotice flash={view.flash} />
      {USER_SECTIONS.map((S) => (
        <S view={view} />
      ))}
    </AdminLayout>,
    status,
  );

const userOf = async <E extends ConsoleEnv>(c: Context<E>): Promise<UserRow> =>
  (await directory(c.env).getUser(Number(c.req.param('id')))) ?? raise(problems.notFound('User'));

/** `/admin/users`: every user, a new user, and each user's page with their impersonation tokens. */
export const adminUserPages = new Hono<ConsoleEnv>()
  .get('/admin/users', async (c) => {
    const viewer = c.var.viewer;
    const flash = await takeFlash(c);
    const search = (c.req.query('search') ?? '').slice(0, 255);
    return c.html(
      <AdminLayout title="Users" viewer={viewer} area="/admin/users">
        <h1>Users</h1>
        <FlashNotice flash={flash} />
        <NewUser csrf={viewer.csrf} flash={flash} />
        <UserList c={c} search={search} />
      </AdminLayout>,
    );
  })
  .post('/admin/users', formCsrf(), (c) => {
    const form = c.var.form;
    const values = { username: formText(form, 'username').trim(), name: formText(form, 'name'), email: formText(form, 'email').trim(), admin: formText(form, 'admin') === 'true' ? 'true' : 'false' };
    return act(c, { form: NEW_USER, returnTo: '/admin/users', values }, async () => {
      const input = parseForm(NewUserSchema, { ...values, email: values.email || undefined, password: formText(form, 'password') });
      const user = unwrap(await createAccount(c.env, input));
      return `Created @${user.username}${user.admin ? ', an administrator' : ''}. They can sign in now.`;
    });
  })
  .get('/admin/users/:id{[0-9]+}', async (c) => userPage(c, { c, user: await userOf(c), flash: await takeFlash(c) }))
  .post('/admin/users/:id{[0-9]+}/impersonation_tokens', formCsrf({ all: true }), async (c) => {
    const user = await userOf(c);
    const form = c.var.form;
    const values = { name: formText(form, 'name'), expires_at: formText(form, 'expires_at') };
    const scopes = [form.scopes ?? []].flat().filter((s): s is string => typeof s === 'string');
    try {
      const input = parseForm(NewImpersonationToken, { name: values.name, scopes, expires_at: values.expires_at || undefined });
      const issued = await issueImpersonationToken(c.env, user.id, input);
      // The token is shown on this answer only: never stored, never sent again.
      c.header('Cache-Control', 'no-store');
      return userPage(c, { c, user, flash: { notice: `Created the token ${issued.row.name}.` }, issued: { name: issued.row.name, token: issued.token } }, 201);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 404) return problemPage(c, e);
      return userPage(c, { c, user, flash: { alert: { form: NEW_TOKEN, ...describeProblem(e) }, values } }, 400);
    }
  })
  .post('/admin/users/:id{[0-9]+}/impersonation_tokens/:token_id{[0-9]+}/revoke', formCsrf(), async (c) => {
    const user = await userOf(c);
    return act(c, { form: NEW_TOKEN, returnTo: `/admin/users/${user.id}` }, async () => {
      const token = await tokens.findAccessToken(c.env, user.id, Number(c.req.param('token_id')), true);
      await tokens.revokeAccessToken(c.env, token);
      return `Revoked the token ${token.name}. It stopped working at once.`;
    });
  });
