import type { Context } from 'hono';
import { publicOrigin } from '../config';
import type { BaseEnv } from '../env';
import { providerMetadata } from './provider';

/** The document as text, by issuer: built once per isolate, then served from memory. */
const documents = new Map<string, string>();

/**
 * `GET /.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4) and
 * `GET /.well-known/oauth-authorization-server` (RFC 8414 §3): one document, from the provider's
 * table. It changes only with a deployment, so clients may keep it an hour.
 */
export const metadataEndpoint = (c: Context<BaseEnv>) => {
  const issuer = publicOrigin(c.env, c.req.url);
  let text = documents.get(issuer);
  if (text === undefined) {
    text = JSON.stringify(providerMetadata(issuer));
    if (documents.size >= 16) documents.clear();
    documents.set(issuer, text);
  }
  return new Response(text, { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=3600' } });
};
