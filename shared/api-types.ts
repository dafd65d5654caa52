// The JSON shapes of Knock's API that clients rely on (contract §3–§5). Types only.

export type { NamespaceKind } from './access-levels';

export interface User {
  id: number;
  username: string;
  name: string;
  avatar_url?: string | null;
  web_url?: string;
  is_admin?: boolean;
}

export interface Group {
  id: number;
  name: string;
  path: string;
  full_path: string;
  web_url?: string;
}

export interface Project {
  id: number;
  name: string;
  path: string;
  path_with_namespace: string;
  name_with_namespace: string;
  web_url?: string;
}

/** A pending access request (contract §3). `id` is the requester's user id. */
export interface AccessRequest {
  id: number;
  username: string;
  name: string;
  state: string;
  avatar_url: string | null;
  web_url: string;
  created_at: string;
  requested_at: string;
}

/** What approving returns: the new member (no `requested_at`). */
export interface ApprovedAccessRequest extends Omit<AccessRequest, 'requested_at'> {
  access_level: number;
  expires_at: string | null;
  created_by: { id: number; username: string; name: string };
}

/** Successful answer of `POST /login/oauth/access_token` (contract §5). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  created_at: number;
}

/** Error bodies: `{"message": ...}` on the API, `{"error", "error_description"}` from OAuth. */
export interface ErrorBody {
  message?: unknown;
  error?: string;
  error_description?: string;
}
