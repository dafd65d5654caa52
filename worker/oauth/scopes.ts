/**
 * Every scope Knock knows, in one table (the provider's table, provider.ts, lists them from
 * here): what a token with it may call on `/api/v4`, whether personal and impersonation tokens
 * may carry it, and what the consent page tells the user it gives the application. GitLab's token
 * scopes: `api` does everything, `read_api` only reads, `read_user` only reads the user API
 * (`/user`, `/users`). OpenID Connect's (Core 1.0 §5.4, GitLab's "GitLab as OpenID Connect
 * identity provider"): `openid` signs the user in and releases their profile and group
 * memberships (at the token endpoint and `/oauth/userinfo`, never on `/api/v4`), `email` adds
 * their email address; `profile` releases nothing beyond `openid`, as GitLab's claims all hang on
 * `openid`.
 */
interface ScopeDefinition {
  /** What a token with this scope may call on `/api/v4` (`path` is relative to it). */
  allows: (method: string, path: string) => boolean;
  /** Personal access tokens and impersonation tokens may carry it (OpenID Connect's are for applications). */
  personal: boolean;
  /** What the consent page says the application may do or learn with it. */
  consent: string;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const nothingOnTheApi = () => false;

export const SCOPE_TABLE = {
  api: {
    allows: () => true,
    personal: true,
    consent: 'Act as you on the Knock API: see groups and projects, request access, approve and deny requests.',
  },
  read_api: {
    allows: (method) => READ_METHODS.has(method),
    personal: true,
    consent: 'Read the Knock API as you: see groups, projects and access requests, without changing anything.',
  },
  read_user: {
    allows: (method, path) => READ_METHODS.has(method) && /^\/users?(?:\/|$)/.test(path),
    personal: true,
    consent: 'Read your profile and the list of users, and nothing else.',
  },
  openid: {
    allows: nothingOnTheApi,
    personal: false,
    consent:
      'Sign you in: it learns your username, your name, the address of your profile, and the groups you belong to (directly or through a parent group), with your role in each.',
  },
  profile: {
    allows: nothingOnTheApi,
    personal: false,
    consent: 'Read your name, username and the address of your profile.',
  },
  email: {
    allows: nothingOnTheApi,
    personal: false,
    consent: 'Read your email address.',
  },
} as const satisfies Record<string, ScopeDefinition>;

export type Scope = keyof typeof SCOPE_TABLE;
/** Every scope, as applications may register and request them. */
export const SCOPES = Object.keys(SCOPE_TABLE) as Scope[];
/** The scopes a personal access token or impersonation token may carry. */
export const TOKEN_SCOPES = SCOPES.filter((s) => SCOPE_TABLE[s].personal);

export const parseScopes = (value: string): string[] => [...new Set(value.split(/[\s,]+/).filter(Boolean))];
export const isKnownScope = (s: string): s is Scope => Object.hasOwn(SCOPE_TABLE, s);
export const isTokenScope = (s: string): boolean => isKnownScope(s) && SCOPE_TABLE[s].personal;

/** GitLab's routes that any token may call about itself, whatever its scopes (`allow_access_with_scope` all scopes). */
const ANY_SCOPE_PATHS = new Set(['/personal_access_tokens/self']);

/**
 * The scopes that would allow a call, or null when the token's scopes already do. GitLab answers
 * a call outside a token's scopes with 403 `insufficient_scope`, naming the scopes that would do.
 */
export const missingScopes = (scopes: readonly string[], method: string, path: string): Scope[] | null => {
  if (ANY_SCOPE_PATHS.has(path)) return null;
  if (scopes.some((s) => isKnownScope(s) && SCOPE_TABLE[s].allows(method, path))) return null;
  return SCOPES.filter((s) => SCOPE_TABLE[s].allows(method, path));
};
