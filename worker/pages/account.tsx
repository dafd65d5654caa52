import { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { endAllSessions, endSession } from '../auth/session';
import { grantsOf } from '../durable/grants';
import { FlashNotice, PostForm, Section, When } from './components';
import { takeFlash, type Flash } from './flash';
import { formCsrf } from './form-csrf';
import { Layout } from './layout';
import type { ConsoleEnv, PageContext } from './viewer';

interface AccountView {
  c: PageContext;
  flash: Flash;
}

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
  const count = (await grantsOf(c.env, c.var.viewer.user.id).listAuthorizations()).length;
  return (
    <Section id="applications" title="Authorized applications">
      <p>
        {count === 0 ? 'No application may act for you.' : `${count} application${count === 1 ? '' : 's'} may act for you.`}{' '}
        <a href="/oauth/authorized_applications">See and revoke them</a>
      </p>
    </Section>
  );
};

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

/**
 * The sections of the account page, in order, each one component. Personal access tokens (issue
 * of the `pat` work) are one more entry here when their service exists.
 */
const SECTIONS: FC<{ view: AccountView }>[] = [Profile, Applications, Sessions];

/** `/-/profile`: the signed-in user's account. */
export const accountSettingsPages = new Hono<ConsoleEnv>()
  .get('/-/profile', async (c) => {
    const viewer = c.var.viewer;
    const view: AccountView = { c, flash: await takeFlash(c) };
    return c.html(
      <Layout title="Your account" user={viewer.user} csrf={viewer.csrf} current="/-/profile" wide>
        <h1>Your account</h1>
        <FlashNotice flash={view.flash} />
        {SECTIONS.map((S) => (
          <S view={view} />
        ))}
      </Layout>,
    );
  })
  .post('/-/profile/sign_out_everywhere', formCsrf(), async (c) => {
    await endAllSessions(c.env, c.var.viewer.user.id);
    await endSession(c);
    return c.redirect('/users/sign_in', 303);
  });
