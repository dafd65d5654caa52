import type { Context } from 'hono';
import { decodeBase64 } from 'hono/utils/encode';
import { safeEqual } from '../auth/crypto';
import type { BaseEnv } from '../env';
import { problems, raise } from '../errors';
import { hashSecret } from '../store/tokens';
import { findClient, findClientCached, isPublicClient, type OAuthClient } from '../services/clients';

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Knock", charset="UTF-8"' };

/** RFC 6749 §5.2: 401 invalid_client, with a Basic challenge when the client tried Basic. */
const invalidClient = (description: string, usedBasic: boolean) =>
  problems.oauth('invalid_client', description, 401, usedBasic ? BASIC_CHALLENGE : {});

/** RFC 6749 §2.3.1: Basic credentials (RFC 7617 §2, base64 of UTF-8) are the form-urlencoded id and secret. */
const readBasic = (header: string | undefined): { id: string; secret: string } | null | 'malformed' => {
  const m = /^Basic\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  try {
    const decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(decodeBase64(m[1]));
    const colon = decoded.indexOf(':');
    if (colon < 0) return 'malformed';
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
};

/**
 * Who is calling the token, revocation or introspection endpoint (RFC 6749 §2.3): a confidential
 * client proves itself with its secret (Basic or in the body, never both); a public client only
 * names itself. `confidentialOnly` refuses public clients (introspection). `cached` may answer
 * from this isolate's recent read of the application (see clients.ts for when that is safe).
 */
export const authenticateClient = async (
  c: Context<BaseEnv>,
  params: Record<string, string>,
  opts: { confidentialOnly?: boolean; cached?: boolean } = {},
): Promise<OAuthClient> => {
  const basic = readBasic(c.req.header('authorization'));
  if (basic === 'malformed') return raise(invalidClient('The Basic authorization header is malformed.', true));
  const usedBasic = basic !== null;
  if (basic && params.client_secret) {
    return raise(problems.oauth('invalid_request', 'Use one client authentication method, not both Basic and client_secret.'));
  }
  if (basic && params.client_id && params.client_id !== basic.id) {
    return raise(problems.oauth('invalid_request', 'client_id does not match the Basic authorization header.'));
  }
  const clientId = basic?.id ?? params.client_id;
  if (!clientId) return raise(invalidClient('client_id is missing.', usedBasic));
  const client = await (opts.cached ? findClientCached : findClient)(c.env, clientId);
  if (!client) return raise(invalidClient('Unknown client.', usedBasic));

  const secret = basic ? basic.secret : params.client_secret;
  if (isPublicClient(client)) {
    if (secret) return raise(invalidClient('This is a public client: it has no secret.', usedBasic));
    if (opts.confidentialOnly) return raise(invalidClient('Only confidential clients may use this endpoint.', usedBasic));
    return client;
  }
  if (!secret) return raise(invalidClient('Client authentication is required.', usedBasic));
  if (!safeEqual(await hashSecret(c.env, secret), client.secretHash as string)) {
    return raise(invalidClient('Client authentication failed.', usedBasic));
  }
  return client;
};
