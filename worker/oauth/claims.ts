import type { GroupClaims } from '../store/tokens';
import { CLAIMS, type Claim, type ClaimSink } from './provider';

/** The user as claims describe them: the grant's copy when a token is issued, the token record's at `/oauth/userinfo`. */
interface ClaimsUser {
  id: number;
  username: string;
  name: string;
  email: string | null;
}

/** Values of some claims; a null or undefined value is left out, as GitLab leaves out what it does not have. */
type ClaimValues = Partial<Record<Claim, unknown>>;

/**
 * The user's claims as GitLab writes them: `sub` is the user's id, `nickname` and
 * `preferred_username` the username, `profile` their page. Knock does not verify email addresses,
 * so `email_verified` is false (OpenID Connect Core 1.0 §5.1: true only when the provider took
 * affirmative steps to verify it). GitLab's role claims are left out when empty (its `.presence`).
 */
export const userClaims = (user: ClaimsUser, origin: string, groups: GroupClaims | null): ClaimValues => ({
  sub: String(user.id),
  name: user.name,
  nickname: user.username,
  preferred_username: user.username,
  profile: `${origin}/${encodeURIComponent(user.username)}`,
  email: user.email,
  email_verified: user.email === null ? null : false,
  ...(groups && {
    groups: groups.groups,
    groups_direct: groups.groups_direct,
    'https://gitlab.org/claims/groups/owner': groups.owner.length > 0 ? groups.owner : null,
    'https://gitlab.org/claims/groups/maintainer': groups.maintainer.length > 0 ? groups.maintainer : null,
    'https://gitlab.org/claims/groups/developer': groups.developer.length > 0 ? groups.developer : null,
  }),
});

/**
 * The claims released to `sink` for a token with `scopes`: each as the provider's table says
 * (provider.ts `CLAIMS`: which scope releases it, and where), without the ones that have no value.
 */
export const releasedClaims = (sink: ClaimSink, scopes: readonly string[], values: ClaimValues): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(values).filter(([name, value]) => {
      const claim = CLAIMS[name as Claim];
      return value !== null && value !== undefined && (claim.in as readonly ClaimSink[]).includes(sink) && scopes.includes(claim.scope);
    }),
  );
