import type { TokenResponse } from '../../protocol/token-response';
import type { GroupClaims } from '../../store/tokens';
import type { UserRow } from '../directory/types';
import type { UserState } from '../user-lifecycle';

/**
 * What the Worker and other objects exchange with a user's `User` object (user.ts): the requests
 * its token-service methods take and what they answer.
 */

/** A browser session as its user's object finds it: live (with when the user signed in, epoch seconds), ended by the user's state, or none. */
/** A live session, with how many requests wait in the user's inbox (the console's header shows it); or why it ended. */
export type SessionLookup =
  | { user: UserRow; csrfToken: string; signedInAt: number; requirementPartitions: number[]; waiting: number }
  | { endedBecause: Exclude<UserState, 'active'> }
  | null;

export interface CodeRequest {
  userId: number;
  clientId: string;
  /** The redirect_uri the authorization request named; null when it named none. */
  redirectUri: string | null;
  scopes: string[];
  codeChallenge: string | null;
  /** Remember the user's consent, so the next identical authorization needs no page. */
  rememberConsent: boolean;
  /** What the id_tokens of this authorization say of the sign-in (OpenID Connect Core 1.0 §2). */
  nonce: string | null;
  authTime: number | null;
  sid: string | null;
}

/**
 * Who signed in to the grant, when and in which browser session: what an id_token says besides the
 * claims read when it is issued. `nonce` only for the code's own exchange (Core §12.2: a refreshed
 * id_token need not repeat it).
 */
export interface Authentication {
  user: UserRow;
  authTime: number | null;
  nonce: string | null;
  sid: string | null;
}

/**
 * A token response and, when `openid` was granted, what its id_token says besides the token: the
 * sign-in behind the grant and the group claims its access token carries (null otherwise, so the
 * user's profile crosses from the object only when an id_token needs it).
 */
export interface Issued {
  response: TokenResponse;
  idToken: { authentication: Authentication; groups: GroupClaims } | null;
}

/** A code, or why none was issued. */
export type IssuedCode = { code: string } | { refused: 'inactive_user' | 'deleted_client' };

export interface CodeRedemption {
  userId: number;
  code: string;
  clientId: string;
  publicClient: boolean;
  redirectUri: string | null;
  codeVerifier: string | null;
  /** The issuer the id_tokens of the grant name: its logout tokens name it too. */
  issuer: string;
}

export interface RefreshRequest {
  userId: number;
  refreshToken: string;
  clientId: string;
  /** RFC 6749 §6: an optional narrower scope. */
  scope: string[] | null;
}

/** What the authorized-applications page lists: one entry per application. */
export interface Authorization {
  clientId: string;
  scopes: string[];
  authorizedAt: string;
}

export interface RefreshTokenInfo {
  userId: number;
  clientId: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
}

/**
 * What an inbox poll's one call answers (user.ts `pollInbox`): the inbox version, and, when the
 * access token presented is a live one of this user, its scopes and whether the user is an
 * administrator (whose inbox is every request).
 */
export interface InboxPoll {
  version: number;
  token: { scopes: string[]; admin: boolean } | null;
}
