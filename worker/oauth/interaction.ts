import type { AuthorizationRequest } from './authorization-request';

/** The browser's signed-in user as the authorization endpoint needs it. */
export interface SignedIn {
  username: string;
  /** When they signed in (epoch seconds); null when the session did not record it. */
  signedInAt: number | null;
}

/** What the authorization endpoint does next with a valid request. */
type Interaction =
  /** Nobody is signed in: the sign-in page, then back. */
  | { kind: 'sign-in' }
  /** The user must sign in again (`prompt=login`, `max_age` passed, another user named by `login_hint`): the sign-in page, then back without what asked for it. */
  | { kind: 'reauthenticate' }
  /** The consent page. */
  | { kind: 'consent' }
  /** A consent given before covers the request: the code at once, with no page. */
  | { kind: 'issue' }
  /** `prompt=none` and a page would be needed: OpenID Connect Core 1.0 §3.1.2.6's error, on the redirect. */
  | { kind: 'refuse'; error: 'login_required' | 'consent_required' | 'interaction_required'; description: string };

/**
 * OpenID Connect Core 1.0 §3.1.2.1 and §3.1.2.3, in this order: a user must be signed in; one
 * named by `login_hint` must be the one signed in; `prompt=login` and a `max_age` shorter than the
 * time since the sign-in ask for a new sign-in; then consent, remembered unless `prompt=consent`.
 * With `prompt=none` every step that needs a page is an error instead (§3.1.2.6). `max_age` allows
 * a second for clocks, as GitLab's provider does. `hasConsent` is asked only when it decides.
 */
export const nextInteraction = async (
  r: Pick<AuthorizationRequest, 'prompt' | 'maxAge' | 'loginHint'>,
  user: SignedIn | null,
  hasConsent: () => Promise<boolean>,
  now: number,
): Promise<Interaction> => {
  const silent = r.prompt.includes('none');
  if (!user) return silent ? refuse('login_required', 'Nobody is signed in.') : { kind: 'sign-in' };
  if (r.loginHint !== null && r.loginHint.toLowerCase() !== user.username.toLowerCase()) {
    return silent ? refuse('interaction_required', 'Another user is signed in than login_hint names.') : { kind: 'reauthenticate' };
  }
  const tooOld = r.maxAge !== null && (user.signedInAt === null || now - user.signedInAt > Math.max(1, r.maxAge));
  if (tooOld) return silent ? refuse('login_required', 'The user signed in longer ago than max_age allows.') : { kind: 'reauthenticate' };
  if (r.prompt.includes('login')) return { kind: 'reauthenticate' };
  if (!r.prompt.includes('consent') && (await hasConsent())) return { kind: 'issue' };
  return silent ? refuse('consent_required', 'The user has not authorized this application for these scopes.') : { kind: 'consent' };
};

const refuse = (error: 'login_required' | 'consent_required' | 'interaction_required', description: string): Interaction => ({ kind: 'refuse', error, description });
