import { getPath } from 'hono/utils/url';
import { publicOrigin } from '../config';
import type { Env } from '../env';
import { jwksResponse } from './jwks';
import { metadataResponse } from './metadata';
import { ENDPOINTS, METADATA_PATHS } from './provider';

const METADATA = new Set<string>(METADATA_PATHS);
const JWKS = new Set<string>(ENDPOINTS.jwks);

/**
 * The provider's published documents (the metadata and the JWKS), answered from the isolate's
 * memory before the app and its middleware: they read no session, token or body, and relying
 * parties fetch them on every start and key change, so they cost no more than a fixed answer. Only
 * a plain GET; anything else (a preflight, HEAD, another method) and the JWKS of a deployment
 * without TOKEN_HASH_KEY (its first key could not be sealed: the app answers 503) go to the app,
 * which routes the same documents. Null when the request is not for one of them.
 */
export const publishedDocument = (request: Request, env: Env): Promise<Response> | null => {
  if (request.method !== 'GET') return null;
  // Hono's own path reader (what its router matches on), without a second URL parse.
  const path = getPath(request);
  if (METADATA.has(path)) return Promise.resolve(metadataResponse(publicOrigin(env, request.url)));
  if (JWKS.has(path) && env.TOKEN_HASH_KEY) return jwksResponse(env);
  return null;
};
