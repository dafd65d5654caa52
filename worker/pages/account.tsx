import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { endAllSessions, endSession } from '../auth/session';
import { userObject } from '../durable/user/user';
import * as tokens from '../services/access-tokens';
import { act } from './actions';
import { issueFromForm, IssuedTokenBox, RevokeTokenConfirm, TokenForm, TokenTable, type IssuedToken } from './access-tokens';
import { alertFor, FlashNotice, Pagination, pageNumber, PostForm, Section, When, windowFor } from './components';
import { takeFlash, type Flash } from './flash';
import { formCsrf } from './form-csrf';
import { Layout } from './layout';
import type { ConsoleEnv, PageContext } from './viewer';

interface AccountView {
  c: PageContext;
  flash: Flash;
  /** A personal access token just created, shown this once. */
  issued?: IssuedToken;
}

const PERSONAL = tokens.TOKEN_KINDS.personal;
const NEW_TOKEN = 'new-personal-access-token';
const TOKENS_PATH = '/-/profile/personal_access_tokens';

const Profile = (p: { view: AccountView }) => {
  const { user } = p.view.c.var.viewer;
  return (
    <Section id="profile" title="Profile">
      <dl class="facts">
        <dt>Name</dt>
        <dd>{user.name}</dd>
        <dt>Username</dt>
        <dd>@{user.username}</dd>
        <dt>Email</dt>
        <dd>{user.email ?? 'none'}</dd>
        <dt>Member since</dt>
        <dd>
          <When iso={user.created_at} />
        </dd>
        {user.admin ? (
          <>
            <dt>Role</dt>
            <dd>Administrator</dd>
          </>
        ) : null}
      </dl>
    </Section>
  );
};

/** The applications the user let act for them, on their own page (where each is revoked). */
const Applications = async (p: { view: AccountView }) => {
  const { c } = p.view;
  const count = (await userObject(c.env, c.var.viewer.user.id).listAuthorizations()).length;
  return (
    <Section id="applications" title="Authorized applications">
      <p>
        {count === 0 ? 'No application may act for you.' : `${count} application${count === 1 ? '' : 's'} may act for you.`}{' '}
        <a href="/oauth/authorized_applications">See and revoke them</a>
      </p>
    </Section>
  );
};

/**
 * The viewer's personal access tokens (GitLab's User settings → Access tokens): the active ones,
 * newest first, each with Revoke; a form to create one, shown once on the answer.
 */
const PersonalAccessTokens = async (p: { view: AccountView }) => {
  const { c, flash, issued } = p.view;
  const { viewer } = c.var;
  const page = pageNumber(c.req.query('tokens_page'));
  const { total, tokens: rows } = await tokens.listAccessTokens(c.env, { userId: viewer.user.id, impersonation: false, state: 'active' }, windowFor(page));
  const alert = alertFor(flash, NEW_TOKEN);
  return (
    <Section id="personal-access-tokens" title={`Personal access tokens (${total})`}>
      <p class="muted">A personal access token acts as you on the API (in a <code>PRIVATE-TOKEN</code> header, or as a Bearer token), with the scopes you give it. It is shown once, when it is made.</p>
      <IssuedTokenBox issued={issued} />
      {rows.length > 0 ? (
        <TokenTable rows={rows} caption="Your active personal access tokens" revokeHref={(t) => `${TOKENS_PATH}/${t.id}/revoke`} />
      ) : (
        <p class="muted">You have no active personal access tokens.</p>
      )}
      <Pagination url={c.req.url} param="tokens_page" page={page} total={total} label="personal access tokens" />
      <h3>New personal access token</h3>
      <TokenForm action={TOKENS_PATH} csrf={viewer.csrf} kind={PERSONAL} label="New personal access token" alert={alert} values={alert ? flash.values ?? {} : {}} defaultScopes={[]} />
    </Section>
  );
};

/** Whether the viewer has a second factor, and where to change it (account-two-factor.tsx). */
const TwoFactor = (p: { view: AccountView }) => (
  <Section id="two-factor" title="Two-factor authentication">
    <p>
      {p.view.c.var.viewer.user.two_factor_enabled ? 'On: signing in needs your password and a second factor.' : 'Off: your password alone signs you in.'}{' '}
      <a href="/-/profile/two_factor_auth">Manage two-factor authentication</a>
    </p>
  </Section>
);

const Sessions = (p: { view: AccountView }) => (
  <Section id="sessions" title="Sessions">
    <p>Signed in on another computer, or lost one? Signing out everywhere ends every browser session of your account, this one too. Applications you authorized keep working: revoke them above.</p>
    <PostForm action="/-/profile/sign_out_everywhere" csrf={p.view.c.var.viewer.csrf}>
      <button class="danger" type="submit">
        Sign out everywhere
      </button>
    </PostForm>
  </Section>
);

/** The sections of the account page, in order, each one component. */
const SECTIONS: FC<{ view: AccountView }>[] = [Profile, TwoFactor, PersonalAccessTokens, Applications, Sessions];

const accountPage = <E extends ConsoleEnv>(c: Context<E>, view: AccountView, status: 200 | 201 | 400 = 200) => {
  const viewer = c.var.viewer;
  return c.html(
    <Layout title="Your account" viewer={viewer} current="/-/profile" wide>
      <h1>Your account</h1>
      <FlashNotice flash={view.flash} />
      {SECTIONS.map((S) => (
        <S view={view} />
      ))}
    </Layout>,
    status,
  );
};

/** One of the viewer's own personal access tokens, or the 404 page (another user's, an impersonation token, none). */
const ownToken = <E extends ConsoleEnv>(c: Context<E>) => tokens.findAccessToken(c.env, c.var.viewer.user.id, Number(c.req.param('token_id')), PERSONAL);

/** `/-/profile`: the signed-in user's account. */
export const accountSettingsPages = new Hono<ConsoleEnv>()
  .get('/-/profile', async (c) => accountPage(c, { c, flash: await takeFlash(c) }))
  // The address the token form answers at (a reload, a bookmark): the tokens on the account page.
  .get(TOKENS_PATH, (c) => c.redirect('/-/profile#personal-access-tokens', 302))
  // `POST /user/personal_access_tokens`, for the viewer.
  .post(TOKENS_PATH, formCsrf({ all: true }), (c) =>
    issueFromForm(c, c.var.form, { userId: c.var.viewer.user.id, kind: PERSONAL, formName: NEW_TOKEN }, (flash, issued, status) => accountPage(c, { c, flash, issued }, status)),
  )
  .get(`${TOKENS_PATH}/:token_id{[0-9]+}/revoke`, async (c) => {
    const token = await ownToken(c);
    const viewer = c.var.viewer;
    return c.html(
      <Layout title={`Revoke ${token.name}`} viewer={viewer} current="/-/profile">
        <RevokeTokenConfirm token={token} owner="you" action={c.req.path} viewer={viewer} returnTo="/-/profile" />
      </Layout>,
    );
  })
  // `DELETE /personal_access_tokens/:id`, limited to the viewer's own tokens.
  .post(`${TOKENS_PATH}/:token_id{[0-9]+}/revoke`, formCsrf(), async (c) => {
    const token = await ownToken(c);
    return act(c, { form: NEW_TOKEN, returnTo: '/-/profile' }, async () => {
      await tokens.revokeAccessToken(c.env, token);
      return `Revoked the token ${token.name}. It stopped working at once.`;
    });
  })
  .post('/-/profile/sign_out_everywhere', formCsrf(), async (c) => {
    await endAllSessions(c.env, c.var.viewer.user.id);
    await endSession(c);
    return c.redirect('/users/sign_in', 303);
  });
