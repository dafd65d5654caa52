import { isPublicClient, type OAuthClient } from '../protocol/oauth-client';
import { isS256Challenge } from '../protocol/pkce';
import { matchesRegisteredRedirectUri } from './redirect-uri';
import { PROVIDER } from './provider';
import { isKnownScope, parseScopes } from './scopes';

/** A value of OpenID Connect's `prompt` that Knock supports (provider.ts `PROVIDER.prompts`). */
type Prompt = (typeof PROVIDER.prompts)[number];

/** A valid authorization request (RFC 6749 §4.1.1 with RFC 7636 §4.3 and OpenID Connect Core 1.0 §3.1.2.1). */
export interface AuthorizationRequest {
  client: OAuthClient;
  /** Where the answer goes: the request's redirect_uri, or the application's only one. */
  redirectUri: string;
  /** Whether the request named its redirect_uri; then the code's exchange must name it too (RFC 6749 §4.1.3). */
  redirectUriNamed: boolean;
  state: string | null;
  scopes: string[];
  codeChallenge: string | null;
  /** Returned in the id_token, to bind it to the client's session (Core §3.1.2.1). */
  nonce: string | null;
  /** `none` never shows a page; `login` signs the user in again; `consent` asks again (Core §3.1.2.1). */
  prompt: Prompt[];
  /** The longest time in seconds since the user signed in that the client accepts. */
  maxAge: number | null;
  /** The username the client expects, offered on the sign-in page. */
  loginHint: string | null;
}

/** Longest `nonce` and `login_hint` kept (they are stored with the code). */
const MAX_NONCE_LENGTH = 512;
const MAX_LOGIN_HINT_LENGTH = 255;

/**
 * What to do with an authorization request, in the order RFC 6749 §4.1.2.1 requires: a bad
 * client or redirect URI is shown to the user (never redirected to); any other problem goes back
 * to the client's redirect URI.
 */
export type CheckedAuthorization =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'show'; title: string; detail: string }
  | { kind: 'redirect'; redirectUri: string; state: string | null; error: string; description: string };

/** The request's parameters; a parameter sent twice is kept as null (RFC 6749 §3.1 forbids it). */
export const authorizationParams = (entries: Iterable<[string, string]>): Map<string, string | null> => {
  const params = new Map<string, string | null>();
  for (const [name, value] of entries) {
    if (value === '') continue;
    params.set(name, params.has(name) ? null : value);
  }
  return params;
};

/** How the request's client_id is resolved: clients.ts `findClient` with the request's env. */
type FindClient = (clientId: string) => Promise<OAuthClient | null>;

export const checkAuthorizationRequest = async (findClient: FindClient, params: Map<string, string | null>): Promise<CheckedAuthorization> => {
  const show = (title: string, detail: string): CheckedAuthorization => ({ kind: 'show', title, detail });

  const clientId = params.get('client_id');
  if (clientId === null) return show('Invalid request', 'client_id was sent more than once.');
  if (clientId === undefined) return show('Invalid request', 'The request has no client_id.');
  const client = await findClient(clientId);
  if (!client) return show('Unknown application', 'No application is registered with this client_id.');

  const requested = params.get('redirect_uri');
  if (requested === null) return show('Invalid request', 'redirect_uri was sent more than once.');
  let redirectUri: string;
  if (requested === undefined) {
    if (client.redirectUris.length !== 1) return show('Invalid request', 'redirect_uri is required: the application has several.');
    redirectUri = client.redirectUris[0];
  } else if (matchesRegisteredRedirectUri(client.redirectUris, requested)) {
    redirectUri = requested;
  } else {
    return show('Invalid redirect URI', 'The redirect_uri is not registered for this application.');
  }

  // From here on, errors go back to the (now trusted) redirect URI.
  const duplicate = [...params].find(([, v]) => v === null);
  const state = params.get('state') ?? null;
  const back = (error: string, description: string): CheckedAuthorization => ({ kind: 'redirect', redirectUri, state, error, description });
  if (duplicate) return back('invalid_request', `${duplicate[0]} was sent more than once.`);

  const responseType = params.get('response_type') ?? 'code';
  if (responseType !== 'code') return back('unsupported_response_type', 'Only response_type=code is supported.');
  const responseMode = params.get('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') return back('invalid_request', 'Only response_mode=query is supported.');
  // OpenID Connect Core 1.0 §6: request objects are not supported (Discovery: request_parameter_supported false).
  if (params.has('request')) return back('request_not_supported', 'Request objects are not supported.');
  if (params.has('request_uri')) return back('request_uri_not_supported', 'request_uri is not supported.');

  const scopes = params.has('scope') ? parseScopes(params.get('scope') as string) : client.scopes;
  if (scopes.length === 0 || !scopes.every(isKnownScope)) return back('invalid_scope', 'The requested scope is unknown.');
  if (!scopes.every((s) => client.scopes.includes(s))) return back('invalid_scope', 'The requested scope is not allowed for this application.');

  const challenge = params.get('code_challenge');
  const method = params.get('code_challenge_method');
  if (challenge === undefined) {
    if (method !== undefined) return back('invalid_request', 'code_challenge_method was sent without a code_challenge.');
    if (isPublicClient(client)) return back('invalid_request', 'This application must use PKCE: send a code_challenge with code_challenge_method=S256.');
  } else {
    // RFC 7636 §4.4.1: only the S256 transformation is supported; "plain" is refused.
    if (method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.');
    if (!isS256Challenge(challenge as string)) return back('invalid_request', 'code_challenge is not a valid S256 challenge.');
  }

  const oidc = openIdParams(params);
  if ('problem' in oidc) return back('invalid_request', oidc.problem);

  return { kind: 'ok', request: { client, redirectUri, redirectUriNamed: requested !== undefined, state, scopes: [...scopes].sort(), codeChallenge: challenge ?? null, ...oidc } };
};

/** OpenID Connect Core 1.0 §3.1.2.1: `nonce`, `prompt`, `max_age` and `login_hint`, or what is wrong with them. */
const openIdParams = (params: Map<string, string | null>): Pick<AuthorizationRequest, 'nonce' | 'prompt' | 'maxAge' | 'loginHint'> | { problem: string } => {
  const nonce = params.get('nonce') ?? null;
  if (nonce !== null && nonce.length > MAX_NONCE_LENGTH) return { problem: `nonce may have at most ${MAX_NONCE_LENGTH} characters.` };
  const loginHint = params.get('login_hint') ?? null;
  if (loginHint !== null && loginHint.length > MAX_LOGIN_HINT_LENGTH) return { problem: `login_hint may have at most ${MAX_LOGIN_HINT_LENGTH} characters.` };
  const maxAgeText = params.get('max_age');
  if (maxAgeText !== undefined && !/^[0-9]{1,10}$/.test(maxAgeText as string)) return { problem: 'max_age must be a whole number of seconds.' };
  const prompt = [...new Set((params.get('prompt') ?? '').split(' ').filter(Boolean))];
  const unknown = prompt.find((p) => !(PROVIDER.prompts as readonly string[]).includes(p));
  if (unknown !== undefined) return { problem: `prompt=${unknown} is not supported: use ${PROVIDER.prompts.join(', ')}.` };
  // §3.1.2.1: none with any other value is an error.
  if (prompt.includes('none') && prompt.length > 1) return { problem: 'prompt=none cannot be combined with other values.' };
  return { nonce, prompt: prompt as Prompt[], maxAge: maxAgeText === undefined ? null : Number(maxAgeText), loginHint };
};

/**
 * The client's redirect URI with the authorization response added (RFC 6749 §4.1.2, RFC 9207
 * `iss`), keeping any query the registered URI already has.
 */
export const redirectWith = (redirectUri: string, params: Record<string, string | null>): string => {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value);
  return url.href;
};
