import type { UserState } from '../user-lifecycle';

/**
 * What the Worker and other objects exchange with the Directory (directory.ts): users and their
 * snapshots, OAuth applications, personal and impersonation tokens.
 */

export interface UserRow {
  id: number;
  username: string;
  name: string;
  email: string | null;
  admin: boolean;
  state: UserState;
  created_at: string;
  /** Rises with every change of the row; copies of the user keep the newest they were told. */
  version: number;
  /** The administrator behind ADMIN_TOKEN. */
  builtin: boolean;
  /** Whether the user has a second factor: a copy of their `User` object's fact (user/two-factor.ts). */
  two_factor_enabled: boolean;
}

/** A user who was deleted: final, so it outranks every version a live row could have had. */
interface DeletedUser {
  id: number;
  state: 'deleted';
  version: number;
}
export const DELETED_VERSION = Number.MAX_SAFE_INTEGER;

/** What the Directory tells a copy of a user (the user's grant authority, token records). */
export type UserSnapshot = UserRow | DeletedUser;

/** `PUT /users/:id`: the fields given are changed. */
export interface UserChanges {
  username?: string;
  name?: string;
  email?: string;
  admin?: boolean;
  passwordHash?: string;
}

export interface ApplicationRow {
  id: number;
  client_id: string;
  secret_hash: string | null;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  confidential: boolean;
  created_at: string;
  /** OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are sent; null for none. */
  backchannel_logout_uri: string | null;
  /** OpenID Connect RP-Initiated Logout 1.0 §3.1: where the end-session endpoint may send the browser back to. */
  post_logout_redirect_uris: string[];
}

/** A personal access token or impersonation token, as listed (never the token itself). */
export interface AccessTokenRow {
  id: number;
  user_id: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  created_at: string;
  /** Epoch seconds. */
  expires_at: number;
  revoked: boolean;
  last_used_at: string | null;
}

/**
 * Which tokens a list shows (GitLab's personal access tokens finder): each field set narrows it.
 * Times are ISO 8601 UTC; `expiresBefore`/`expiresAfter` and `now` are epoch seconds.
 */
export interface AccessTokenFilter {
  userId?: number;
  impersonation?: boolean;
  /** `active`: neither revoked nor expired at `now`; `inactive`: either. */
  state?: 'active' | 'inactive';
  revoked?: boolean;
  /** Part of the name, without regard to case. */
  search?: string;
  createdBefore?: string;
  createdAfter?: string;
  lastUsedBefore?: string;
  lastUsedAfter?: string;
  expiresBefore?: number;
  expiresAfter?: number;
  now: number;
}


export interface NewAccessToken {
  userId: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  tokenHash: string;
  expiresAt: number;
}

export interface NewUser {
  username: string;
  name: string;
  email?: string | null;
  passwordHash?: string | null;
  admin?: boolean;
}

export interface NewApplication {
  clientId: string;
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  scopes: string[];
  confidential: boolean;
  backchannelLogoutUri: string | null;
  postLogoutRedirectUris: string[];
}
