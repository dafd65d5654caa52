import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { NewUserSchema, UserEditSchema } from '../../api/users';
import { directory } from '../../durable/directory/directory';
import type { UserRow } from '../../durable/directory/types';
import { unwrap } from '../../durable/result';
import { deletionProblem, transition, type StateAction } from '../../durable/user-lifecycle';
import { problems, raise } from '../../errors';
import { createAccount } from '../../services/accounts';
import * as tokens from '../../services/access-tokens';
import * as users from '../../services/users';
import { issueFromForm, IssuedTokenBox, RevokeTokenConfirm, TokenForm, TokenTable, type IssuedToken } from '../access-tokens';
import { act, formText, parseForm } from '../actions';
import { alertFor, Confirm, DataTable, FormError, FlashNotice, Pagination, pageNumber, PostForm, Section, TextField, When, windowFor } from '../components';
import { takeFlash, type Flash, type FormAlert } from '../flash';
import { formCsrf, type FormFields } from '../form-csrf';
import type { ConsoleEnv, PageContext } from '../viewer';
import { AdminLayout } from './nav';
import { resetTwoFactor } from '../../services/two-factor';

const NEW_USER = 'new-user';
const NEW_TOKEN = 'new-token';

/** Users, 20 a page, oldest first; `search` as an administrator's `GET /users?search=`. */
const UserList = async (p: { c: PageContext; search: string }) => {
  const { c } = p;
  const page = pageNumber(c.req.query('page'));
  const { offset, limit } = windowFor(page);
  const { total, users: rows } = await directory(c.env).listUsers({ search: p.search || undefined, withPrivateEmails: true }, offset, limit);
  return (
    <Section id="users" title={`Users (${total})`}>
      <form method="get" action="/admin/users" class="search" role="search">
        <label for="user-search">Search by username, name or email</label>
        <input type="search" id="user-search" name="search" value={p.search} />
        <button type="submit">Search</button>
      </form>
      <DataTable caption="Users" columns={['User', 'Email', 'Role', 'State', 'Created']}>
        {rows.map((u) => (
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
      </DataTable>
      <Pagination url={c.req.url} param="page" page={page} total={total} label="users" />
    </Section>
  );
};

/** What a user form's fields were, to fill it in again after an error (never the password). */
const userValues = (form: FormFields) => ({
  username: formText(form, 'username').trim(),
  name: formText(form, 'name'),
  email: formText(form, 'email').trim(),
  admin: formText(form, 'admin') === 'true' ? 'true' : 'false',
});

/**
 * The fields of a user, for creating one (`POST /users`) or editing one (`PUT /users/:id`, where
 * an empty password leaves it unchanged), with the error beside its field.
 */
const UserForm = (p: { id: string; action: string; csrf: string; label: string; values: Record<string, string>; alert: FormAlert | null; editing: boolean; submit: string }) => (
  <PostForm action={p.action} csrf={p.csrf} label={p.label}>
    <div class="fields">
      <TextField id={`${p.id}-username`} name="username" label="Username" value={p.values.username} alert={p.alert} required />
      <TextField id={`${p.id}-name`} name="name" label="Full name" value={p.values.name} alert={p.alert} required />
      <TextField id={`${p.id}-email`} name="email" label={p.editing ? 'Email (empty: unchanged)' : 'Email (optional)'} type="email" value={p.values.email} alert={p.alert} />
      <TextField
        id={`${p.id}-password`}
        name="password"
        label={p.editing ? 'New password (empty: unchanged)' : 'Password (at least 8 characters)'}
        type="password"
        alert={p.alert}
        required={!p.editing}
        autocomplete="new-password"
      />
    </div>
    <label class="choice">
      <input type="checkbox" name="admin" value="true" checked={p.values.admin === 'true'} /> Administrator
    </label>
    <FormError alert={p.alert} fields={['username', 'name', 'email', 'password']} />
    <div class="actions">
      <button class="primary" type="submit">
        {p.submit}
      </button>
    </div>
  </PostForm>
);

const NewUser = (p: { csrf: string; flash: Flash }) => {
  const alert = alertFor(p.flash, NEW_USER);
  return (
    <Section id="new-user" title="New user">
      <UserForm id="new" action="/admin/users" csrf={p.csrf} label="New user" values={alert ? p.flash.values ?? {} : {}} alert={alert} editing={false} submit="Create user" />
    </Section>
  );
};

/** What an administrator sees of one user. */
interface UserView {
  c: PageContext;
  user: UserRow;
  flash: Flash;
  /** An impersonation token just issued, shown this once. */
  issued?: IssuedToken;
}

const EDIT_USER = 'edit-user';
const USER_STATE = 'user-state';
const IMPERSONATION = tokens.TOKEN_KINDS.impersonation;

const userPath = (user: Pick<UserRow, 'id'>) => `/admin/users/${user.id}`;

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
        <dt>Two-factor authentication</dt>
        <dd>{u.two_factor_enabled ? 'on' : 'off'}</dd>
        <dt>Created</dt>
        <dd>
          <When iso={u.created_at} />
        </dd>
      </dl>
    </div>
  );
};

/** `PUT /users/:id`: username, name, email, administrator, a new password (empty: unchanged). */
const EditUser = (p: { view: UserView }) => {
  const { c, user, flash } = p.view;
  const alert = alertFor(flash, EDIT_USER);
  const values = alert ? flash.values ?? {} : { username: user.username, name: user.name, email: user.email ?? '', admin: String(user.admin) };
  return (
    <Section id="edit-user" title="Edit">
      <UserForm id="edit" action={userPath(user)} csrf={c.var.viewer.csrf} label={`Edit @${user.username}`} values={values} alert={alert} editing submit="Save changes" />
    </Section>
  );
};

/** What each state change does, as the page says it (GitLab's user moderation). */
const STATE_ACTIONS: { action: StateAction; label: string; does: string; done: string; danger: boolean }[] = [
  { action: 'block', label: 'Block', does: 'cannot sign in or use the API: their sessions, tokens, authorizations and pending access requests end at once.', done: 'Blocked', danger: true },
  { action: 'unblock', label: 'Unblock', does: 'may sign in again; the tokens and authorizations the block ended stay ended.', done: 'Unblocked', danger: false },
  { action: 'deactivate', label: 'Deactivate', does: 'is locked out as by a block, until activated again.', done: 'Deactivated', danger: true },
  { action: 'activate', label: 'Activate', does: 'may sign in again; what the deactivation ended stays ended.', done: 'Activated', danger: false },
];

/**
 * Block, unblock, deactivate, activate and delete: only the changes GitLab's rules allow this
 * viewer on this user (`transition`, `deletionProblem`) have a button; the service judges again.
 */
const AccountState = (p: { view: UserView }) => {
  const { c, user, flash } = p.view;
  const viewer = c.var.viewer;
  const offered = STATE_ACTIONS.filter(({ action }) => {
    const t = transition(action, user, viewer.user.id);
    return !('problem' in t) && t.answer === true;
  });
  const deletable = deletionProblem(user, []) === null;
  const alert = alertFor(flash, USER_STATE);
  return (
    <Section id="account-state" title="Account">
      <p>
        @{user.username} is <strong>{user.state}</strong>.
      </p>
      <ul class="plain">
        {offered.map((a) => (
          <li>
            <PostForm action={`${userPath(user)}/${a.action}`} csrf={viewer.csrf} class="row-form" label={`${a.label} @${user.username}`}>
              <button type="submit" class={a.danger ? 'danger' : undefined}>
                {a.label} @{user.username}
              </button>
              <span class="muted">
                @{user.username} {a.does}
              </span>
            </PostForm>
          </li>
        ))}
        {user.two_factor_enabled ? (
          <li>
            <PostForm action={`${userPath(user)}/disable_two_factor`} csrf={viewer.csrf} class="row-form" label={`Disable two-factor authentication of @${user.username}`}>
              <button type="submit" class="danger">
                Disable two-factor authentication
              </button>
              <span class="muted">removes @{user.username}'s authenticator app, passkeys and recovery codes: their password alone signs them in.</span>
            </PostForm>
          </li>
        ) : null}
        {deletable ? (
          <li>
            <a class="button danger" href={`${userPath(user)}/delete`}>
              Delete @{user.username}
            </a>{' '}
            <span class="muted">after a confirmation: with their memberships, pending requests, tokens and personal projects.</span>
          </li>
        ) : null}
      </ul>
      {offered.length === 0 && !deletable ? <p class="muted">This account cannot be blocked, deactivated or deleted.</p> : null}
      <FormError alert={alert} fields={[]} />
    </Section>
  );
};

/** Impersonation tokens: issue one (shown once), see them, revoke one (`/users/:id/impersonation_tokens`). */
const ImpersonationTokens = async (p: { view: UserView }) => {
  const { c, user, flash, issued } = p.view;
  const page = pageNumber(c.req.query('tokens_page'));
  const { total, tokens: rows } = await tokens.listAccessTokens(c.env, { userId: user.id, impersonation: true }, windowFor(page));
  const alert = alertFor(flash, NEW_TOKEN);
  return (
    <Section id="impersonation-tokens" title="Impersonation tokens">
      <p class="muted">A token acts as @{user.username} on the API. It is shown once, when it is made.</p>
      <IssuedTokenBox issued={issued} />
      {user.state === 'active' ? (
        <TokenForm
          action={`${userPath(user)}/impersonation_tokens`}
          csrf={c.var.viewer.csrf}
          kind={IMPERSONATION}
          label="New impersonation token"
          alert={alert}
          values={alert ? flash.values ?? {} : {}}
          defaultScopes={['api']}
        />
      ) : (
        <p class="muted">Only an active user can be given a token.</p>
      )}
      {rows.length > 0 ? (
        <TokenTable rows={rows} caption={`Impersonation tokens of @${user.username}`} revokeHref={(t) => `${userPath(user)}/impersonation_tokens/${t.id}/revoke`} />
      ) : (
        <p class="muted">No impersonation tokens.</p>
      )}
      <Pagination url={c.req.url} param="tokens_page" page={page} total={total} label="impersonation tokens" />
    </Section>
  );
};

/** The sections of a user's administration page, in order, each one component. */
const USER_SECTIONS: FC<{ view: UserView }>[] = [Facts, EditUser, AccountState, ImpersonationTokens];

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

const impersonationTokenOf = async <E extends ConsoleEnv>(c: Context<E>, user: UserRow) => tokens.findAccessToken(c.env, user.id, Number(c.req.param('token_id')), IMPERSONATION);

/** What a state change's answer means (`true`: done; `null`: it already was; `false`: nothing to undo). */
const stateNotice = (a: (typeof STATE_ACTIONS)[number], username: string, answer: boolean | null) =>
  answer === true ? `${a.done} @${username}.` : answer === null ? `@${username} was already ${a.done.toLowerCase()}.` : `@${username} was not ${a.action === 'unblock' ? 'blocked' : 'deactivated'}: nothing changed.`;

const USER = '/admin/users/:id{[0-9]+}';

/** `/admin/users`: every user, a new user, and each user's page: edit, state, delete, impersonation tokens. */
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
    const values = userValues(form);
    return act(c, { form: NEW_USER, returnTo: '/admin/users', values }, async () => {
      const input = parseForm(NewUserSchema, { ...values, email: values.email || undefined, password: formText(form, 'password') });
      const user = unwrap(await createAccount(c.env, input));
      return `Created @${user.username}${user.admin ? ', an administrator' : ''}. They can sign in now.`;
    });
  })
  .get(USER, async (c) => userPage(c, { c, user: await userOf(c), flash: await takeFlash(c) }))
  // `PUT /users/:id`. An empty email or password leaves it as it is.
  .post(USER, formCsrf(), async (c) => {
    const user = await userOf(c);
    const form = c.var.form;
    const values = userValues(form);
    const password = formText(form, 'password');
    // An administrator who gives up their own flag can no longer see this area: they land on the dashboard.
    const leavesAdmin = user.id === c.var.viewer.user.id && values.admin !== 'true';
    const returnTo = leavesAdmin ? '/' : userPath(user);
    return act(c, { form: EDIT_USER, returnTo, failedReturnTo: userPath(user), values, notFound: 'This user no longer exists.' }, async () => {
      const edit = parseForm(UserEditSchema, { ...values, email: values.email || undefined, password: password || undefined });
      const saved = await users.updateUser(c.env, user.id, edit);
      return `Saved @${saved.username}.${password ? ' The new password ended their browser sessions.' : ''}`;
    });
  })
  .get(`${USER}/delete`, async (c) => {
    const user = await userOf(c);
    const viewer = c.var.viewer;
    return c.html(
      <AdminLayout title={`Delete @${user.username}`} viewer={viewer} area="/admin/users">
        <Confirm title={`Delete @${user.username}?`} action={c.req.path} csrf={viewer.csrf} returnTo={userPath(user)} confirmLabel={`Delete @${user.username}`}>
          <p>
            {user.name} (@{user.username}) will be gone, with their memberships, pending access requests, tokens, authorizations and personal projects. This cannot be undone.
          </p>
        </Confirm>
      </AdminLayout>,
    );
  })
  // `PATCH /users/:id/disable_two_factor` (the console may reset an administrator's too).
  .post(`${USER}/disable_two_factor`, formCsrf(), async (c) => {
    const user = await userOf(c);
    return act(c, { form: USER_STATE, returnTo: userPath(user) }, async () => {
      await resetTwoFactor(c.env, user.id, { adminsToo: true });
      return `Disabled two-factor authentication of @${user.username}.`;
    });
  })
  // `DELETE /users/:id`: back to the list; a refusal (the only Owner of a group) shows on the user's page.
  .post(`${USER}/delete`, formCsrf(), async (c) => {
    const user = await userOf(c);
    return act(c, { form: USER_STATE, returnTo: '/admin/users', failedReturnTo: userPath(user) }, async () => {
      await users.deleteUser(c.env, user.id);
      return `Deleted @${user.username}.`;
    });
  })
  .post('/admin/users/:id{[0-9]+}/impersonation_tokens', formCsrf({ all: true }), async (c) => {
    const user = await userOf(c);
    return issueFromForm(c, c.var.form, { userId: user.id, kind: IMPERSONATION, formName: NEW_TOKEN }, (flash, issued, status) => userPage(c, { c, user, flash, issued }, status));
  })
  .get('/admin/users/:id{[0-9]+}/impersonation_tokens/:token_id{[0-9]+}/revoke', async (c) => {
    const user = await userOf(c);
    const token = await impersonationTokenOf(c, user);
    const viewer = c.var.viewer;
    return c.html(
      <AdminLayout title={`Revoke ${token.name}`} viewer={viewer} area="/admin/users">
        <RevokeTokenConfirm token={token} owner={`@${user.username}`} action={c.req.path} viewer={viewer} returnTo={userPath(user)} />
      </AdminLayout>,
    );
  })
  .post('/admin/users/:id{[0-9]+}/impersonation_tokens/:token_id{[0-9]+}/revoke', formCsrf(), async (c) => {
    const user = await userOf(c);
    const token = await impersonationTokenOf(c, user);
    return act(c, { form: NEW_TOKEN, returnTo: userPath(user) }, async () => {
      await tokens.revokeAccessToken(c.env, token);
      return `Revoked the token ${token.name}. It stopped working at once.`;
    });
  });

// `POST /users/:id/block`, `unblock`, `deactivate`, `activate`: written once.
for (const a of STATE_ACTIONS) {
  adminUserPages.post(`${USER}/${a.action}`, formCsrf(), async (c) => {
    const user = await userOf(c);
    return act(c, { form: USER_STATE, returnTo: userPath(user) }, async () => stateNotice(a, user.username, await users.changeUserState(c.env, user.id, a.action, c.var.caller)));
  });
}
