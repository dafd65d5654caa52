import { Hono, type Context } from 'hono';
import { csrfTokenFor, type Session } from '../auth/session';
import { epochSeconds } from '../clock';
import { publicOrigin } from '../config';
import { userObject } from '../durable/user/user';
import type { PageEnv } from '../auth/session';
import { consentPage } from '../pages/consent';
import { errorPage } from '../pages/error-page';
import { formCsrf } from '../pages/form-csrf';
import { sessionSid } from '../protocol/session-id';
import { authorizationParams, checkAuthorizationRequest, redirectWith, type AuthorizationRequest, type CheckedAuthorization } from './authorization-request';
import { findClientCached } from '../services/clients';
import { nextInteraction } from './interaction';
import { ENDPOINTS } from './provider';
import { twoFactorRequirement } from '../services/two-factor';

/** Where the consent form posts and a signed-out POST comes back to: Knock's own path. */
const AUTHORIZE_PATH = ENDPOINTS.authorization[1];

const hostOf = (uri: string) => {
  const url = new URL(uri);
  return url.host || url.protocol;
};

/**
 * The consent form's hidden fields: the checked request, so the POST re-checks the same thing. The
 * prompt, `max_age` and `login_hint` were settled before the page was shown.
 */
const requestFields = (r: AuthorizationRequest): Record<string, string | null> => ({
  client_id: r.client.clientId,
  redirect_uri: r.redirectUriNamed ? r.redirectUri : null,
  response_type: 'code',
  scope: r.scopes.join(' '),
  state: r.state,
  code_challenge: r.codeChallenge,
  code_challenge_method: r.codeChallenge ? 'S256' : null,
  nonce: r.nonce,
});

const signInPage = (returnTo: URL, extra: Record<string, string | null>) => {
  const query = new URLSearchParams({ return_to: returnTo.pathname + returnTo.search });
  for (const [name, value] of Object.entries(extra)) if (value !== null) query.set(name, value);
  return `/users/sign_in?${query}`;
};

/** Signed out: sign in first (offering `login_hint`), then back to this same authorization request. */
const signInFirst = <E extends PageEnv>(c: Context<E>, r: AuthorizationRequest) => {
  let back = new URL(c.req.url);
  if (c.req.method !== 'GET') {
    back = new URL(AUTHORIZE_PATH, c.req.url);
    back.search = new URLSearchParams(Object.entries(requestFields(r)).filter((e): e is [string, string] => e[1] !== null)).toString();
  }
  return c.redirect(signInPage(back, { login_hint: r.loginHint }), 302);
};

/**
 * Sign in again, then back to this request without what asked for it (`prompt=login`, and a
 * `login_hint` that was offered on the page), as GitLab's provider does; a `max_age` stays, and the
 * new sign-in satisfies it.
 */
const reauthenticate = <E extends PageEnv>(c: Context<E>, r: AuthorizationRequest) => {
  const back = new URL(c.req.url);
  const prompt = r.prompt.filter((p) => p !== 'login');
  back.searchParams.delete('prompt');
  if (prompt.length > 0) back.searchParams.set('prompt', prompt.join(' '));
  back.searchParams.delete('login_hint');
  return c.redirect(signInPage(back, { reauthenticate: '1', login_hint: r.loginHint }), 302);
};

/** RFC 6749 §4.1.2: the code goes back with `state` and, per RFC 9207, `iss`. */
const issueCodeAndRedirect = async <E extends PageEnv>(c: Context<E>, session: Session, r: AuthorizationRequest, rememberConsent: boolean, status: 302 | 303) => {
  const user = session.user;
  // A member a group requires a second factor of gets no code until they have one (GitLab's rule).
  const required = await twoFactorRequirement(c.env, session);
  if (required) return errorPage(c, 403, 'Two-factor authentication required', `${required} Set it up on your account's two-factor page (/-/profile/two_factor_auth), then try again.`);
  const issued = await userObject(c.env, user.id).issueCode({
    userId: user.id,
    clientId: r.client.clientId,
    redirectUri: r.redirectUriNamed ? r.redirectUri : null,
    scopes: r.scopes,
    codeChallenge: r.codeChallenge,
    rememberConsent,
    nonce: r.nonce,
    authTime: session.signedInAt,
    sid: await sessionSid(session.idHash),
  });
  // The user was blocked while authorizing: their session has ended; back to the sign-in page.
  if ('refused' in issued && issued.refused === 'inactive_user') return c.redirect('/users/sign_in', 303);
  // RFC 6749 §4.1.2.1: an invalid client is told to the user, never redirected to.
  if ('refused' in issued) return errorPage(c, 400, 'Unknown application', 'No application is registered with this client_id.');
  return c.redirect(redirectWith(r.redirectUri, { code: issued.code, state: r.state, iss: publicOrigin(c.env, c.req.url) }), status);
};

const formEntries = (form: Record<string, unknown>): [string, string][] =>
  Object.entries(form)
    .filter(([name]) => name !== 'authenticity_token' && name !== 'decision')
    .flatMap(([name, value]) => ([] as unknown[]).concat(value).map((v): [string, string] => [name, typeof v === 'string' ? v : '']));

/** The checked request, or the answer to a request that is not one: an error page, or the error on the redirect. */
const answerInvalid = <E extends PageEnv>(c: Context<E>, checked: Exclude<CheckedAuthorization, { kind: 'ok' }>, status: 302 | 303) => {
  if (checked.kind === 'show') return errorPage(c, 400, checked.title, checked.detail);
  const { redirectUri, state, error, description } = checked;
  return c.redirect(redirectWith(redirectUri, { error, error_description: description, state, iss: publicOrigin(c.env, c.req.url) }), status);
};

/**
 * `GET /oauth/authorize` (GitLab's path) and `/login/oauth/authorize`: RFC 6749 §4.1.1 with OpenID
 * Connect Core 1.0 §3.1.2; and the consent form's answer.
 */
export const authorizeRoutes = new Hono<PageEnv>();
for (const path of ENDPOINTS.authorization) {
  authorizeRoutes
    .use(path, async (c, next) => {
      await next();
      c.header('Cache-Control', 'no-store');
    })
    .get(path, async (c) => {
      const checked = await checkAuthorizationRequest((clientId) => findClientCached(c.env, clientId), authorizationParams(new URL(c.req.url).searchParams));
      if (checked.kind !== 'ok') return answerInvalid(c, checked, 302);
      const r = checked.request;
      const session = c.var.session;
      const next = await nextInteraction(
        r,
        session && { username: session.user.username, signedInAt: session.signedInAt },
        () => userObject(c.env, (session as Session).user.id).hasConsent(r.client.clientId, r.scopes),
        epochSeconds(),
      );
      switch (next.kind) {
        case 'refuse':
          return c.redirect(redirectWith(r.redirectUri, { error: next.error, error_description: next.description, state: r.state, iss: publicOrigin(c.env, c.req.url) }), 302);
        case 'sign-in':
          return signInFirst(c, r);
        case 'reauthenticate':
          return reauthenticate(c, r);
        // A remembered consent answers at once, with no page: this is how the extension signs in again.
        case 'issue':
          return issueCodeAndRedirect(c, session as Session, r, false, 302);
        case 'consent':
          return consentPage(c, {
            applicationName: r.client.name,
            redirectHost: hostOf(r.redirectUri),
            scopes: r.scopes,
            user: (session as Session).user,
            csrf: csrfTokenFor(c),
            action: AUTHORIZE_PATH,
            hidden: requestFields(r),
          });
      }
    })
    .post(path, formCsrf({ all: true }), async (c) => {
      const form = c.var.form;
      const checked = await checkAuthorizationRequest((clientId) => findClientCached(c.env, clientId), authorizationParams(formEntries(form)));
      if (checked.kind !== 'ok') return answerInvalid(c, checked, 303);
      const r = checked.request;
      const session = c.var.session;
      if (!session) return signInFirst(c, r);
      if (form.decision === 'deny') {
        return c.redirect(redirectWith(r.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: r.state, iss: publicOrigin(c.env, c.req.url) }), 303);
      }
      if (form.decision !== 'authorize') return errorPage(c, 400, 'Invalid request', 'Choose Authorize or Deny.');
      return issueCodeAndRedirect(c, session, r, true, 303);
    });
}
