/**
 * Scopes a token may carry (GitLab's token scopes): `api` does everything, `read_api` only
 * reads, `read_user` only reads the user API (`/user`, `/users`).
 */
export const SCOPES = ['api', 'read_api', 'read_user'] as const;
export type Scope = (typeof SCOPES)[number];

export const parseScopes = (value: string): string[] => [...new Set(value.split(/[\s,]+/).filter(Boolean))];
export const isKnownScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** GitLab's routes that any token may call about itself, whatever its scopes (`allow_access_with_scope` all scopes). */
const ANY_SCOPE_PATHS = new Set(['/personal_access_tokens/self']);

/** What each scope lets a token do on `/api/v4` (`path` is relative to it). */
const ALLOWS: Record<Scope, (method: string, path: string) => boolean> = {
  api: () => true,
  read_api: (method) => READ_METHODS.has(method),
  read_user: (method, path) => READ_METHODS.has(method) && /^\/users?(?:\/|$)/.test(path),
};

/**
 * The scopes that would allow a call, or null when the token's scopes already do. GitLab answers
 * a call outside a token's scopes with 403 `insufficient_scope`, naming the scopes that would do.
 */
export const missingScopes = (scopes: readonly string[], method: string, path: string): Scope[] | null => {
  if (ANY_SCOPE_PATHS.has(path)) return null;
  if (scopes.some((s) => isKnownScope(s) && ALLOWS[s](method, path))) return null;
  return SCOPES.filter((s) => ALLOWS[s](method, path));
};
