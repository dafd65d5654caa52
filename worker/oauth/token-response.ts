/** The token endpoint's success body (contract §5, RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** Epoch seconds, as GitLab sends it. */
  created_at: number;
}

/** RFC 6749 §5.1: responses carrying tokens (and their errors) must not be cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
