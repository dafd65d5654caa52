/** An OAuth client as the token service sees it, whether registered or built in. */
export interface OAuthClient {
  clientId: string;
  name: string;
  /** Keyed hash of the client secret; null for a public client, which must use PKCE S256. */
  secretHash: string | null;
  redirectUris: string[];
  scopes: string[];
  /** OpenID Connect RP-Initiated Logout 1.0 §3.1: where the end-session endpoint may redirect to. */
  postLogoutRedirectUris: string[];
}

/** A public client (RFC 6749 §2.1): it has no secret, so it must use PKCE (RFC 7636). */
export const isPublicClient = (client: OAuthClient): boolean => client.secretHash === null;
