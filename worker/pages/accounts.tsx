import { Hono, type MiddlewareHandler } from 'hono';
import { csrfTokenFor, endSession, safeReturnTo, startSession, startSignIn } from '../auth/session';
import { config } from '../config';
import type { PageEnv } from '../auth/session';
import { NewUserSchema } from '../api/users';
import { describeIssue } from '../api/router';
import { clientAddress } from '../edge/client-address';
import { LIMITS, rateLimit } from '../edge/rate-limits';
import { checkPassword, createAccount } from '../services/accounts';
import { errorPage } from './error-page';
import { formCsrf } from './form-csrf';
import { CsrfField, ErrorNotice, Layout } from './layout';
import { FormError, TextField } from './components';
import type { FormAlert } from './flash';
import { describeProblem } from './problems';
import { PASSKEY_SIGN_IN_PATH, PasskeyForm, passkeySignInOptions, SECOND_STEP_PATH, secondStepPages } from './two-factor-sign-in';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { ApiError, problems } from '../errors';
import type { z } from '@hono/zod-openapi';

const SignInPage = (p: { csrf: string; returnTo: string; username?: string; error?: string | null; signupEnabled: boolean; passkey?: PublicKeyCredentialRequestOptionsJSON }) => (
  <Layout title="Sign in">
    <div class="card">
      <h1>Sign in to Knock</h1>
      <ErrorNotice message={p.error} />
      <form method="post" action="/users/sign_in">
        <CsrfField token={p.csrf} />
        <input type="hidden" name="return_to" value={p.returnTo} />
        <label for="username">Username</label>
        <input type="text" id="username" name="username" autocomplete="username" required value={p.username ?? ''} autofocus />
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required />
        <div class="actions stretch">
          <button class="primary" type="submit">Sign in</button>
        </div>
      </form>
      {p.passkey ? (
        <PasskeyForm action={PASSKEY_SIGN_IN_PATH} csrf={p.csrf} mode="get" options={p.passkey} label="Use a passkey">
          <input type="hidden" name="return_to" value={p.returnTo} />
        </PasskeyForm>
      ) : null}
    </div>
    {p.passkey ? <script src="/assets/webauthn.js" defer></script> : null}
    {p.signupEnabled ? (
      <footer class="muted">
        New here? <a href={`/users/sign_up?return_to=${encodeURIComponent(p.returnTo)}`}>Create an account</a>
      </footer>
    ) : null}
  </Layout>
);

const SIGN_UP_FIELDS = ['name', 'username', 'password'];

const SignUpPage = (p: { csrf: string; returnTo: string; values?: Record<string, string>; alert?: FormAlert | null }) => {
  const alert = p.alert ?? null;
  return (
    <Layout title="Sign up">
      <div class="card">
        <h1>Create your Knock account</h1>
        <form method="post" action="/users/sign_up">
          <FormError alert={alert} fields={SIGN_UP_FIELDS} />
          <CsrfField token={p.csrf} />
          <input type="hidden" name="return_to" value={p.returnTo} />
          <TextField id="name" name="name" label="Full name" autocomplete="name" required value={p.values?.name} alert={alert} />
          <TextField id="username" name="username" label="Username" autocomplete="username" required value={p.values?.username} alert={alert} />
          <TextField id="password" name="password" label="Password (at least 8 characters)" type="password" autocomplete="new-password" minlength={8} required alert={alert} />
          <div class="actions stretch">
            <button class="primary" type="submit">
              Create account
            </button>
          </div>
        </form>
      </div>
      <footer class="muted">
        Already have an account? <a href={`/users/sign_in?return_to=${encodeURIComponent(p.returnTo)}`}>Sign in</a>
      </footer>
    </Layout>
  );
};

/**
 * Why a field of the sign-up form is refused, in GitLab's words ("is too short (minimum is 8
 * characters)"), beside that field; other problems as the API words them (problems.ts).
 */
const signUpProblem = (issue: z.core.$ZodIssue): FormAlert => {
  const field = String(issue.path[0] ?? '');
  const label = field.charAt(0).toUpperCase() + field.slice(1);
  if (issue.code === 'too_small' && issue.origin === 'string') return { form: 'sign-up', field, message: `${label} is too short (minimum is ${issue.minimum} characters).` };
  if (issue.code === 'too_big' && issue.origin === 'string') return { form: 'sign-up', field, message: `${label} is too long (maximum is ${issue.maximum} characters).` };
  return { form: 'sign-up', ...describeProblem(new ApiError(400, problems.invalidParam(describeIssue(issue)).body)) };
};

/** Why a user with the right password may not sign in (GitLab's wording, without its auto-reactivation). */
const INACTIVE = {
  blocked: 'Your account has been blocked. Contact your administrator if you think this is an error.',
  deactivated: 'Your account has been deactivated. Contact your administrator to reactivate it.',
} as const;

const formField = (form: Record<string, unknown>, name: string): string => (typeof form[name] === 'string' ? (form[name] as string) : '');

/** Sign-in and sign-up forms, per client address (GitLab's protected paths), before the form is read. */
const perAddress = rateLimit<PageEnv>(LIMITS.protectedPaths, clientAddress, (c) =>
  errorPage(c, 429, 'Too many requests', 'Too many sign-in or sign-up attempts from your address. Retry later.'),
);

/** Sign-up pages are 404 while SIGNUP_ENABLED is off (before any form is read). */
const signupOpen: MiddlewareHandler<PageEnv> = async (c, next) => {
  if (!config(c.env).signupEnabled) return errorPage(c, 404, 'Sign-up is disabled', 'Ask an administrator for an account.');
  await next();
};

/** Sign-in, sign-up and sign-out pages. */
export const accountPages = new Hono<PageEnv>()
  .get('/users/sign_in', async (c) => {
    const returnTo = safeReturnTo(c.req.query('return_to'));
    // OpenID Connect's prompt=login and max_age (oauth/interaction.ts): a signed-in user signs in again.
    const again = c.req.query('reauthenticate') === '1';
    if (c.var.session && !again) return c.redirect(returnTo, 303);
    // Core 1.0 §3.1.2.1 login_hint: the username the application expects, offered in the form.
    const hint = (c.req.query('login_hint') ?? c.var.session?.user.username)?.slice(0, 255);
    // A session that ended with a block or deactivation says why, as GitLab does on the next page.
    const ended = c.var.sessionEndedBecause;
    const error = ended ? INACTIVE[ended] : c.req.query('passkey') === 'refused' ? 'That passkey could not sign you in. Sign in with your password.' : null;
    const passkey = await passkeySignInOptions(c);
    return c.html(<SignInPage csrf={csrfTokenFor(c)} returnTo={returnTo} username={hint} error={error} signupEnabled={config(c.env).signupEnabled} passkey={passkey} />);
  })
  .post('/users/sign_in', perAddress, formCsrf(), async (c) => {
    const form = c.var.form;
    const returnTo = safeReturnTo(form.return_to);
    const username = formField(form, 'username').trim();
    const password = formField(form, 'password');
    const page = (error: string, status: 400 | 401 | 403 | 429) =>
      c.html(<SignInPage csrf={csrfTokenFor(c)} returnTo={returnTo} username={username} error={error} signupEnabled={config(c.env).signupEnabled} />, status);
    if (!username || !password) return page('Enter your username and password.', 400);

    const attempt = await checkPassword(c.env, username, password, clientAddress(c));
    if ('retryAfter' in attempt) {
      c.header('Retry-After', String(attempt.retryAfter));
      return page('Too many failed sign-in attempts. Try again later.', 429);
    }
    const user = attempt.user;
    if (!user) return page('Invalid username or password.', 401);
    // Only someone who knows the password learns why the account may not sign in.
    if (user.state !== 'active') return page(INACTIVE[user.state], 403);
    const started = await startSignIn(c, user, returnTo);
    // Blocked or deactivated while the password was being checked.
    if (started === 'inactive') return page('Your account can no longer sign in. Contact your administrator.', 403);
    return c.redirect(started === 'second-step' ? SECOND_STEP_PATH : returnTo, 303);
  })
  .route('/', secondStepPages(perAddress))
  .post('/users/sign_out', formCsrf(), async (c) => {
    await endSession(c);
    return c.redirect('/users/sign_in', 303);
  })
  .get('/users/sign_up', signupOpen, (c) => {
    return c.html(<SignUpPage csrf={csrfTokenFor(c)} returnTo={safeReturnTo(c.req.query('return_to'))} />);
  })
  .post('/users/sign_up', signupOpen, perAddress, formCsrf(), async (c) => {
    const form = c.var.form;
    const returnTo = safeReturnTo(form.return_to);
    const values = { name: formField(form, 'name'), username: formField(form, 'username').trim() };
    // No email: with no mail to confirm one, "Email has already been taken" would tell anyone
    // whose address it is. A username is public (every user's web_url), so a taken one is said.
    const parsed = NewUserSchema.safeParse({ ...values, password: formField(form, 'password') });
    const again = (alert: FormAlert, status: 400 | 409) => c.html(<SignUpPage csrf={csrfTokenFor(c)} returnTo={returnTo} values={values} alert={alert} />, status);
    if (!parsed.success) return again(signUpProblem(parsed.error.issues[0]!), 400);
    // What an administrator may set is not for a sign-up form to choose.
    const created = await createAccount(c.env, { ...parsed.data, admin: false });
    if (!created.ok) return again({ form: 'sign-up', ...describeProblem(new ApiError(created.problem.status, created.problem.body)) }, 409);
    if (!(await startSession(c, created.value))) return again({ form: 'sign-up', message: 'The account could not be signed in.' }, 409);
    return c.redirect(returnTo, 303);
  });
