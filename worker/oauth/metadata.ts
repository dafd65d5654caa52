import type { Context } from 'hono';
import { publicOrigin } from '../config';
import type { BaseEnv } from '../env';
import { providerMetadata } from './provider';

/** The document as text, by issuer: built once per isolate, then served from memory. */
const documents = new Map<string, string>();

/**
 * The headers of the provider's published documents: JSON, readable from any origin (browser-based
 * relying parties fetch them; no credentials), never sniffed as anything else.
 */
export const publishedHeaders = (maxAge: number): Record<string, string> => ({
  'Content-Type': 'application/json',
  'Cache-Control': `public, max-age=${maxAge}`,
  'Access-Control-Allow-Origin': '*',
  'X-Content-Type-Options': 'nosniff',
});

/**
 * `GET /.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4) and
 * `GET /.well-known/oauth-authorization-server` (RFC 8414 §3): one document, from the provider's
 * table. It changes only with a deployment, so clients may keep it an hour.
 */
export const metadataResponse = (issuer: string): Response => {
  let text = documents.get(issuer);
  if (text === undefined) {
    text = JSON.stringify(providerMetadata(issuer));
    if (documents.size >= 16) documents.clear();
    documents.set(issuer, text);
  }
  return new Response(text, { headers: publishedHeaders(3600) });
};

export const metadataEndpoint = (c: Context<BaseEnv>) => metadataResponse(publicOrigin(c.env, c.req.url));
