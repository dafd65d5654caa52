import { config } from '../config';
import { directory } from '../durable/directory';
import type { Env } from '../env';

/** An OAuth client as the token service sees it, whether registered or built in. */
export interface OAuthClient {
  clientId: string;
  name: string;
  /** Keyed hash of the client secret; null for a public client, which must use PKCE S256. */
  secretHash: string | null;
  redirectUris: string[];
  scopes: string[];
}

/** The browser extension: a public client built into every deployment. */
export const EXTENSION_CLIENT_ID = 'knock-extension';

const extensionClient = (env: Env): OAuthClient => ({
  clientId: EXTENSION_CLIENT_ID,
  name: 'Knock browser extension',
  secretHash: null,
  redirectUris: config(env).extensionRedirectUris,
  scopes: ['api'],
});

export const isPublicClient = (client: OAuthClient): boolean => client.secretHash === null;

/** The one way to resolve a client id: a registered application, or the built-in extension. */
export const findClient = async (env: Env, clientId: string): Promise<OAuthClient | null> => {
  if (clientId === EXTENSION_CLIENT_ID) return extensionClient(env);
  if (!clientId || clientId.length > 128) return null;
  const app = await directory(env).getApplicationByClientId(clientId);
  if (!app) return null;
  return { clientId: app.client_id, name: app.name, secretHash: app.secret_hash, redirectUris: app.redirect_uris, scopes: app.scopes };
};
