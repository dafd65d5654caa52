/**
 * What the provider supports, in one table, as panva's node-oidc-provider keeps it in one
 * configuration object: the metadata documents (metadata.ts), the routes (routes.ts,
 * authorize.ts), the claims each token carries (claims.ts) and the consent page (scopes.ts) all
 * read it from here, so nothing is written twice.
 */
import { DEVICE_CODE_GRANT } from '../protocol/device-codes';
import { SCOPES, type Scope } from './scopes';

/**
 * Each endpoint at GitLab's path first (what the metadata documents name, so a tool preset for
 * GitLab works with Knock's base URL alone), then at Knock's own `/login/oauth/…` path; one
 * handler serves both.
 */
export const ENDPOINTS = {
  /** RFC 6749 §3.1; OpenID Connect Core 1.0 §3.1.2. A page: the user signs in and consents there. */
  authorization: ['/oauth/authorize', '/login/oauth/authorize'],
  /** RFC 6749 §3.2; the code exchange also returns an id_token (Core §3.1.3.3). */
  token: ['/oauth/token', '/login/oauth/access_token'],
  /** RFC 7009. */
  revocation: ['/oauth/revoke', '/login/oauth/revoke'],
  /** RFC 7662. */
  introspection: ['/oauth/introspect', '/login/oauth/introspect'],
  /** OpenID Connect Core 1.0 §5.3. */
  userinfo: ['/oauth/userinfo', '/login/oauth/userinfo'],
  /** RFC 7517 §5, the `jwks_uri` of OpenID Connect Discovery 1.0 §3. */
  jwks: ['/oauth/discovery/keys', '/login/oauth/discovery/keys'],
  /** RFC 8628 §3.1: where a device starts the device authorization grant. */
  deviceAuthorization: ['/oauth/authorize_device', '/login/oauth/authorize_device'],
  /** OpenID Connect RP-Initiated Logout 1.0 §2 (GitLab has none; a page: end-session.ts). */
  endSession: ['/oauth/logout', '/login/oauth/logout'],
} as const;

/** RFC 8628 §3.2 `verification_uri`: the page where the user enters the code (GitLab's path). */
export const DEVICE_VERIFICATION_PATH = '/oauth/device';

export type Endpoint = keyof typeof ENDPOINTS;

/** Where the metadata (`providerMetadata`) is served: OpenID Connect Discovery 1.0 §4 and RFC 8414 §3. */
export const METADATA_PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'] as const;

/** Where a claim is released: in the id_token, from the userinfo endpoint, or both. */
export type ClaimSink = 'id_token' | 'userinfo';

/**
 * Every claim Knock releases, the scope that releases it, and where (GitLab's table in "GitLab as
 * OpenID Connect identity provider"; OpenID Connect Core 1.0 §2 and §5.1). Knock keeps no website
 * or avatar, so GitLab's `website` and `picture` never appear.
 */
export const CLAIMS = {
  iss: { scope: 'openid', in: ['id_token'] },
  sub: { scope: 'openid', in: ['id_token', 'userinfo'] },
  aud: { scope: 'openid', in: ['id_token'] },
  exp: { scope: 'openid', in: ['id_token'] },
  iat: { scope: 'openid', in: ['id_token'] },
  auth_time: { scope: 'openid', in: ['id_token'] },
  nonce: { scope: 'openid', in: ['id_token'] },
  at_hash: { scope: 'openid', in: ['id_token'] },
  /** OpenID Connect Front-Channel Logout 1.0 §3 / Back-Channel Logout 1.0 §2.4: the browser session. */
  sid: { scope: 'openid', in: ['id_token'] },
  name: { scope: 'openid', in: ['id_token', 'userinfo'] },
  nickname: { scope: 'openid', in: ['id_token', 'userinfo'] },
  preferred_username: { scope: 'openid', in: ['id_token', 'userinfo'] },
  profile: { scope: 'openid', in: ['id_token', 'userinfo'] },
  email: { scope: 'email', in: ['id_token', 'userinfo'] },
  email_verified: { scope: 'email', in: ['id_token', 'userinfo'] },
  groups: { scope: 'openid', in: ['userinfo'] },
  groups_direct: { scope: 'openid', in: ['id_token'] },
  'https://gitlab.org/claims/groups/owner': { scope: 'openid', in: ['userinfo'] },
  'https://gitlab.org/claims/groups/maintainer': { scope: 'openid', in: ['userinfo'] },
  'https://gitlab.org/claims/groups/developer': { scope: 'openid', in: ['userinfo'] },
} as const satisfies Record<string, { scope: Scope; in: readonly ClaimSink[] }>;

export type Claim = keyof typeof CLAIMS;

/** The provider's features and the values the metadata documents announce. */
export const PROVIDER = {
  /** RFC 6749 §3.1.1: the authorization code flow only (no implicit or hybrid flows). */
  responseTypes: ['code'],
  /** OAuth 2.0 Multiple Response Type Encoding Practices §2.1: the answer comes back in the query. */
  responseModes: ['query'],
  /** RFC 6749 §4.1 and §6, and RFC 8628 §3.4's device code grant. */
  grantTypes: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
  /** RFC 6749 §2.3.1 (Basic or in the body) for confidential clients; `none` for public clients with PKCE. */
  tokenEndpointAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
  /** RFC 7662 §2.1: introspection is for confidential clients. */
  introspectionAuthMethods: ['client_secret_basic', 'client_secret_post'],
  /** RFC 7636 §4.2: S256 only. */
  codeChallengeMethods: ['S256'],
  /** OpenID Connect Core 1.0 §3.1.2.1 `prompt` (and Initiating User Registration 1.0 §4.1 for the name of the list). */
  prompts: ['none', 'login', 'consent'],
  /** Core §2: id_tokens are JWS with RS256 (RFC 7518 §3.3), the algorithm every relying party must accept. */
  idTokenSigningAlgs: ['RS256'],
  /** Core §8: `sub` is the user's id, the same for every application, as GitLab's. */
  subjectTypes: ['public'],
  /** GitLab's id_tokens live two minutes (doorkeeper-openid_connect's `expiration` default). */
  idTokenTtlSeconds: 120,
} as const;

const at = (issuer: string, endpoint: Endpoint) => `${issuer}${ENDPOINTS[endpoint][0]}`;

/**
 * The provider's metadata: OpenID Connect Discovery 1.0 §3 with RFC 8414 §2 (the two documents
 * share their names), served as both `/.well-known/openid-configuration` and
 * `/.well-known/oauth-authorization-server`, so both list one set.
 */
export const providerMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: at(issuer, 'authorization'),
  token_endpoint: at(issuer, 'token'),
  userinfo_endpoint: at(issuer, 'userinfo'),
  jwks_uri: at(issuer, 'jwks'),
  revocation_endpoint: at(issuer, 'revocation'),
  introspection_endpoint: at(issuer, 'introspection'),
  device_authorization_endpoint: at(issuer, 'deviceAuthorization'),
  scopes_supported: [...SCOPES],
  response_types_supported: [...PROVIDER.responseTypes],
  response_modes_supported: [...PROVIDER.responseModes],
  grant_types_supported: [...PROVIDER.grantTypes],
  subject_types_supported: [...PROVIDER.subjectTypes],
  id_token_signing_alg_values_supported: [...PROVIDER.idTokenSigningAlgs],
  token_endpoint_auth_methods_supported: [...PROVIDER.tokenEndpointAuthMethods],
  revocation_endpoint_auth_methods_supported: [...PROVIDER.tokenEndpointAuthMethods],
  introspection_endpoint_auth_methods_supported: [...PROVIDER.introspectionAuthMethods],
  claims_supported: Object.keys(CLAIMS),
  claim_types_supported: ['normal'],
  prompt_values_supported: [...PROVIDER.prompts],
  code_challenge_methods_supported: [...PROVIDER.codeChallengeMethods],
  authorization_response_iss_parameter_supported: true,
  // Discovery §3: request objects and the `claims` parameter are not supported (their defaults differ).
  request_parameter_supported: false,
  request_uri_parameter_supported: false,
  claims_parameter_supported: false,
  // OpenID Connect RP-Initiated Logout 1.0 §2.1 and Back-Channel Logout 1.0 §2.1: logout tokens
  // carry `sid` (and `sub`), and id_tokens the same `sid`.
  end_session_endpoint: at(issuer, 'endSession'),
  backchannel_logout_supported: true,
  backchannel_logout_session_supported: true,
});
