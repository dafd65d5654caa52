import type { Context } from 'hono';
import type { BaseEnv, Env } from '../env';
import { publishedHeaders } from './metadata';
import { keySet, keySetInMemory } from './signing-keys';

/**
 * `GET /oauth/discovery/keys` (GitLab's path; the `jwks_uri` of OpenID Connect Discovery 1.0 §3):
 * the public keys that verify Knock's id_tokens (RFC 7517 §5), each with its `kid`, including the
 * next key before it signs and the previous one until its last token has expired. From this
 * isolate's memory; clients may cache it five minutes, so a rotation made at once after a leak
 * (docs/deploy.md) reaches them within that time.
 */
export const jwksResponse = (env: Env): Promise<Response> => {
  const respond = (jwks: string) => new Response(jwks, { headers: publishedHeaders(300) });
  const fresh = keySetInMemory();
  return fresh ? Promise.resolve(respond(fresh.jwks)) : keySet(env).then((set) => respond(set.jwks));
};

export const jwksEndpoint = (c: Context<BaseEnv>) => jwksResponse(c.env);
