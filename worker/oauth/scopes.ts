/** Scopes a token may carry (GitLab's token scopes): `api` does everything, `read_api` only reads. */
export const SCOPES = ['api', 'read_api'] as const;
export type Scope = (typeof SCOPES)[number];

export const parseScopes = (value: string): string[] => [...new Set(value.split(/[\s,]+/).filter(Boolean))];
export const isKnownScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);
