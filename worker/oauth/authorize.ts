import { Hono, type Context } from 'hono';
import { csrfTokenFor, type Session } from '../auth/session';
import { publicOrigin } from '../config';
import { userObject } from '../durable/user/user';
import type { PageEnv } from '../env';
import { consentPage } from '../pages/consent';
import { errorPage } from '../pages/error-page';
import { formCsrf } from '../pages/form-csrf';
import { authorizationParams, checkAuthorizationRequest, redirectWith, type AuthorizationRequest } from './authorization-request';
import { findClientCached } from './clients';

const hostOf = (uri: string) => {
  const url = new URL(uri);
  return url.host || url.protocol;
};

/** The consent form's hidden fields: the checked request, so the POST re-checks the same thing. */
const requestFields = (r: AuthorizationRequest): Record<string, string | null> => ({
  client_id: r.client.clientId,
  redirect_uri: r.redirectUriNamed ? r.redirectUri : null,
  response_type: 'code',
  scope: r.scopes.join(' '),
  state: r.state,
  code_challenge: r.codeChallenge,
  code_challenge_method: r.codeChallenge ? 'S256' : null,
});

/** Signed out: sign in first, then back to this same authorization request. */
const signInFirst = <E extends PageEnv>(c: Context<E>, r: AuthorizationRequest) => {
  let back = new URL(c.req.url);
  if (c.req.method !== 'GET') {
    back = new URL('/login/oauth/authorize', c.req.url);
    back.search = new URLSearchParams(Object.entries(requestFields(r)).filter((e): e is [string, string] => e[1] !== null)).toString();
  }
  return c.redirect(`/users/sign_in?return_to=${encodeURIComponent(back.pathname + back.search)}`, 302);
};

/** RFC 6749 §4.1.2: the code goes back with `state` and, per RFC 9207, `iss`. */
const issueCodeAndRedirect = async <E extends PageEnv>(
  c: Context<E>,
  user: Session['user'],
  r: AuthorizationRequest,
  rememberConsent: boolean,
  status: 302 | 303,
) => {
  const issued = await userObject(c.env, user.id).issueCode({
    userId: user.id,
    clientId: r.client.clientId,
    redirectUri: r.redirectUriNamed ? r.redirectUri : null,
    scopes: r.scopes,
    codeChallenge: r.codeChallenge,
    rememberConsent,
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

/** `GET /login/oauth/authorize` (RFC 6749 §4.1.1, at GitLab's path) and the consent form's answer. */
export const authorizeRoutes = new Hono<PageEnv>()
  .use('/login/oauth/authorize', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  })
  .get('/login/oauth/authorize', async (c) => {
    const checked = await checkAuthorizationRequest((clientId) => findClientCached(c.env, clientId), authorizationParams(new URL(c.req.url).searchParams));
    const iss = publicOrigin(c.env, c.req.url);
    if (checked.kind === 'show') return errorPage(c, 400, checked.title, checked.detail);
    if (checked.kind === 'redirect') {
      const { redirectUri, state, error, description } = checked;
      return c.redirect(redirectWith(redirectUri, { error, error_description: description, state, iss }), 302);
    }
    const r = checked.request;
    const session = c.var.session;
    if (!session) return signInFirst(c, r);
    // A remembered consent answers at once, with no page: this is how the extension signs in again.
    if (await userObject(c.env, session.user.id).hasConsent(r.client.clientId, r.scopes)) return issueCodeAndRedirect(c, session.user, r, false, 302);
    return consentPage(c, {
      applicationName: r.client.name,
      redirectHost: hostOf(r.redirectUri),
      scopes: r.scopes,
      user: session.user,
      csrf: csrfTokenFor(c),
      hidden: requestFields(r),
    });
  })
  .post('/login/oauth/authorize', formCsrf({ all: true }), async (c) => {
    const form = c.var.form;
    const checked = await checkAuthorizationRequest((clientId) => findClientCached(c.env, clientId), authorizationParams(formEntries(form)));
    const iss = publicOrigin(c.env, c.req.url);
    if (checked.kind === 'show') return errorPage(c, 400, checked.title, checked.detail);
    if (checked.kind === 'redirect') {
      const { redirectUri, state, error, description } = checked;
      return c.redirect(redirectWith(redirectUri, { error, error_description: description, state, iss }), 303);
    }
    const r = checked.request;
    const session = c.var.session;
    if (!session) return signInFirst(c, r);
    if (form.decision === 'deny') {
      return c.redirect(redirectWith(r.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: r.state, iss }), 303);
    }
    if (form.decision !== 'authorize') return errorPage(c, 400, 'Invalid request', 'Choose Authorize or Deny.');
    return issueCodeAndRedirect(c, session.user, r, true, 303);
  });
