import { Hono, type Context } from 'hono';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { endSession, validCsrf } from '../auth/session';
import { publicOrigin } from '../config';
import type { PageEnv } from '../auth/session';
import { endSessionPage } from '../pages/end-session';
import { errorPage } from '../pages/error-page';
import { findClientCached, type OAuthClient } from '../services/clients';
import { ENDPOINTS } from './provider';
import { redirectWith } from './authorization-request';
import { keySet } from './signing-keys';

/**
 * OpenID Connect RP-Initiated Logout 1.0 at `GET` and `POST /oauth/logout` (and
 * `/login/oauth/logout`): GitLab has no end-session endpoint, so the path is Knock's, beside
 * GitLab's `/oauth/*` ones, and the metadata names it (`end_session_endpoint`).
 *
 * - `id_token_hint` (§2): an id_token Knock signed (an expired one too); its `aud` is the
 *   application, and when its `sub` is the signed-in user the browser is signed out at once.
 * - `client_id`: the application, when there is no hint (must agree with the hint's `aud`).
 * - `post_logout_redirect_uri` (§3): only one the application registered, compared exactly; the
 *   browser goes back there with `state`. Without an application to check it against it is refused.
 * - Without a valid hint a signed-in user is asked first (§2), on a page whose form carries the
 *   session's CSRF token; an RP's own POST is read as a request, never as that answer.
 *
 * Ending the session tells, by back-channel logout, the other applications given `openid` in it;
 * the one that asked is not told (it is ending its own session).
 */

const END_SESSION_PATH = ENDPOINTS.endSession[0];

interface Hint {
  sub: string;
  aud: string;
}

/** An id_token Knock signed (Core §2: `iss` is Knock's origin), verified with the published keys; its expiry is not judged (§2 allows an expired hint). */
const readHint = async (c: Context<PageEnv>, token: string): Promise<Hint | null> => {
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = (await keySet(c.env)).keys.find((k) => k.kid === kid);
    if (!key) return null;
    const { payload } = await compactVerify(token, await importJWK(key.publicJwk, 'RS256'), { algorithms: ['RS256'] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: unknown; sub?: unknown; aud?: unknown };
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (claims.iss !== publicOrigin(c.env, c.req.url) || typeof claims.sub !== 'string' || typeof aud !== 'string') return null;
    return { sub: claims.sub, aud };
  } catch {
    return null;
  }
};

const paramsOf = async (c: Context<PageEnv>): Promise<Record<string, string>> => {
  const raw = c.req.method === 'POST' ? await c.req.parseBody().catch(() => ({})) : Object.fromEntries(new URL(c.req.url).searchParams);
  return Object.fromEntries(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === 'string'));
};

const invalid = (c: Context<PageEnv>, detail: string) => errorPage(c, 400, 'Invalid logout request', detail);

const endSessionEndpoint = async (c: Context<PageEnv>) => {
  c.header('Cache-Control', 'no-store');
  const p = await paramsOf(c);
  const hint = p.id_token_hint ? await readHint(c, p.id_token_hint) : null;
  if (p.id_token_hint && !hint) return invalid(c, 'id_token_hint is not an id_token this server issued.');
  if (hint && p.client_id && p.client_id !== hint.aud) return invalid(c, 'client_id is not the audience of id_token_hint.');
  const clientId = hint?.aud ?? p.client_id ?? null;
  const client: OAuthClient | null = clientId ? await findClientCached(c.env, clientId) : null;
  if (clientId && !client) return invalid(c, 'The application is unknown.');
  const redirectUri = p.post_logout_redirect_uri ?? null;
  if (redirectUri !== null && !client?.postLogoutRedirectUris.includes(redirectUri)) {
    return invalid(c, 'post_logout_redirect_uri is not one the application registered.');
  }
  const status = c.req.method === 'POST' ? 303 : 302;
  const done = () => (redirectUri ? c.redirect(redirectWith(redirectUri, { state: p.state ?? null }), status) : c.redirect('/users/sign_in', status));

  const session = c.var.session;
  if (!session) return done();
  const confirmed = c.req.method === 'POST' && p.decision === 'sign_out' && validCsrf(c, p.authenticity_token);
  if (confirmed || (hint && hint.sub === String(session.user.id))) {
    await endSession(c, client?.clientId ?? null);
    return done();
  }
  return endSessionPage(c, {
    user: session.user,
    csrf: session.csrfToken,
    applicationName: client?.name ?? null,
    action: END_SESSION_PATH,
    hidden: { client_id: client?.clientId ?? null, post_logout_redirect_uri: redirectUri, state: p.state ?? null },
  });
};

export const endSessionRoutes = new Hono<PageEnv>();
for (const path of ENDPOINTS.endSession) endSessionRoutes.on(['GET', 'POST'], path, endSessionEndpoint);
