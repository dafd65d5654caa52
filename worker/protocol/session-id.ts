import { sha256Base64url } from '../auth/crypto';

/**
 * The `sid` of a browser session (OpenID Connect Front-Channel Logout 1.0 §3, Back-Channel Logout
 * 1.0 §2.4), as id_tokens carry it: derived from the keyed hash under which the session's owner
 * keeps the session, so the user's object can name each of its sessions' `sid` again (to tell
 * relying parties which session ended) without storing it, and nothing about the cookie can be
 * learnt from it.
 */
export const sessionSid = (sessionIdHash: string): Promise<string> => sha256Base64url(`sid:${sessionIdHash}`);
