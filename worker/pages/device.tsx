import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { csrfTokenFor, type Session } from '../auth/session';
import { deviceAuthorizations, partitionOfUserCode } from '../durable/device-authorizations/device-authorizations';
import type { UserRow } from '../durable/directory/types';
import { userObject } from '../durable/user/user';
import { LIMITS, rateLimit } from '../edge/rate-limits';
import type { PageEnv } from '../auth/session';
import { findClientCached } from '../services/clients';
import { DEVICE_VERIFICATION_PATH as PATH } from '../oauth/provider';
import { formatUserCode, normalizeUserCode } from '../protocol/device-codes';
import { sessionSid } from '../protocol/session-id';
import { hashSecret } from '../store/tokens';
import { consentPage } from './consent';
import { errorPage } from './error-page';
import { formCsrf } from './form-csrf';
import { CsrfField, ErrorNotice, Layout } from './layout';

type SignedInEnv = PageEnv & { Variables: { session: Session } };

const CodeForm = (p: { user: UserRow; csrf: string; userCode: string; error?: string }) => (
  <Layout title="Connect a device" viewer={{ user: p.user, csrf: p.csrf }}>
    <div class="card">
      <h1>Connect a device</h1>
      <p>Enter the code your device shows.</p>
      <ErrorNotice message={p.error} />
      <form method="post" action={PATH}>
        <CsrfField token={p.csrf} />
        <label for="user_code">Code</label>
        <input type="text" id="user_code" name="user_code" value={p.userCode} placeholder="XXXX-XXXX" autocomplete="off" autocapitalize="characters" spellcheck={false} required autofocus />
        <div class="actions">
          <button class="primary" type="submit">
            Continue
          </button>
        </div>
      </form>
    </div>
  </Layout>
);

const Done = (p: { user: UserRow; csrf: string; title: string; detail: string }) => (
  <Layout title={p.title} viewer={{ user: p.user, csrf: p.csrf }}>
    <div class="card">
      <h1>{p.title}</h1>
      <p>{p.detail}</p>
      <p>
        <a href="/">Back to your dashboard</a>
      </p>
    </div>
  </Layout>
);

/** Signed out: the sign-in page first (before any form is read), then back here with the code the link carried. */
const signedIn: MiddlewareHandler<SignedInEnv> = async (c, next) => {
  if (!c.var.session) {
    const url = new URL(c.req.url);
    const back = c.req.method === 'GET' ? url.pathname + url.search : PATH;
    return c.redirect(`/users/sign_in?return_to=${encodeURIComponent(back)}`, c.req.method === 'GET' ? 302 : 303);
  }
  c.header('Cache-Control', 'no-store');
  await next();
};

const codeForm = <E extends SignedInEnv>(c: Context<E>, userCode: string, error?: string, status: 200 | 400 | 404 = 200) =>
  c.html(<CodeForm user={c.var.session.user} csrf={csrfTokenFor(c)} userCode={userCode} error={error} />, status);

/** Every code entered counts, per user (RFC 8628 §5.1: guesses of user codes are limited). */
const guessLimit = rateLimit<SignedInEnv>(
  LIMITS.deviceUserCodes,
  (c) => String(c.var.session.user.id),
  (c) => errorPage(c, 429, 'Too many codes', 'Wait a minute, then enter the code again.'),
);

/**
 * `GET /oauth/device` (RFC 8628 §3.3, GitLab's path): the signed-in user enters the code a device
 * shows (the link of `verification_uri_complete` fills it in); then the application's name and the
 * scopes it asks for, with what each reveals (the consent page's), and Authorize or Deny. An
 * approval is an authorization code issued by the user's `User` object, handed to the device
 * authorization's owner, which gives it to the device's next poll.
 */
export const devicePages = new Hono<PageEnv>()
  .get(PATH, signedIn, (c) => codeForm(c, c.req.query('user_code') ?? ''))
  .post(PATH, signedIn, formCsrf(), guessLimit, async (c) => {
    const form = c.var.form;
    const typed = typeof form.user_code === 'string' ? form.user_code : '';
    const userCode = normalizeUserCode(typed);
    if (userCode === null) return codeForm(c, typed, 'A code is eight letters, like BCDF-GHJK.', 400);
    const partition = deviceAuthorizations(c.env, partitionOfUserCode(c.env, userCode));
    const userCodeHash = await hashSecret(c.env, userCode);
    const pending = await partition.pending(userCodeHash);
    const client = pending && (await findClientCached(c.env, pending.clientId));
    if (!pending || !client) return codeForm(c, typed, 'This code is not valid, has expired or was already used.', 404);
    const session = c.var.session;
    const user = session.user;
    const csrf = csrfTokenFor(c);

    if (form.decision === undefined) {
      return consentPage(c, {
        applicationName: client.name,
        redirectHost: null,
        userCode: formatUserCode(userCode),
        scopes: pending.scopes,
        user,
        csrf,
        action: PATH,
        hidden: { user_code: formatUserCode(userCode) },
      });
    }
    if (form.decision === 'deny') {
      await partition.decide(userCodeHash, { deny: true });
      return c.html(<Done user={user} csrf={csrf} title="Device not connected" detail={`You denied ${client.name} access to your account.`} />);
    }
    if (form.decision !== 'authorize') return errorPage(c, 400, 'Invalid request', 'Choose Authorize or Deny.');
    const issued = await userObject(c.env, user.id).issueCode({
      userId: user.id,
      clientId: client.clientId,
      redirectUri: null,
      scopes: pending.scopes,
      codeChallenge: null,
      rememberConsent: false,
      nonce: null,
      authTime: session.signedInAt,
      sid: await sessionSid(session.idHash),
    });
    if ('refused' in issued && issued.refused === 'inactive_user') return c.redirect('/users/sign_in', 303);
    if ('refused' in issued) return errorPage(c, 400, 'Unknown application', 'No application is registered with this client_id.');
    if (!(await partition.decide(userCodeHash, { approve: { userId: user.id, code: issued.code } }))) {
      return codeForm(c, typed, 'This code is not valid, has expired or was already used.', 404);
    }
    return c.html(<Done user={user} csrf={csrf} title="Device connected" detail={`${client.name} can now use your account. Go back to your device.`} />);
  });
