import type { Context } from 'hono';
import type { BaseEnv } from '../env';
import { keySet } from './signing-keys';

/**
 * `GET /oauth/discovery/keys` (GitLab's path; the `jwks_uri` of OpenID Connect Discovery 1.0 §3):
 * the public keys that verify Knock's id_tokens (RFC 7517 §5), each with its `kid`, including the
 * next key before it signs and the previous one until its last token has expired. From this
 * isolate's memory; clients may cache it five minutes, so a rotation made at once after a leak
 * (docs/deploy.md) reaches them within that time.
 */
export const jwksEndpoint = async (c: Context<BaseEnv>) =>
  new Response((await keySet(c.env)).jwks, { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' } });
