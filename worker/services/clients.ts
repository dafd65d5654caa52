import { EXTENSION_CLIENT_ID } from '../../shared/knock-app';
import { clock } from '../clock';
import { config } from '../config';
import { clientHoldersOf } from '../durable/client-holders/client-holders';
import type { Env } from '../env';
import type { OAuthClient } from '../protocol/oauth-client';

// The type and its rule are pure (worker/protocol/oauth-client.ts), so the authorization-request rules import no Durable Object.
export { isPublicClient, type OAuthClient } from '../protocol/oauth-client';

/** The browser extension: a public client built into every deployment. */
const extensionClient = (env: Env): OAuthClient => ({
  clientId: EXTENSION_CLIENT_ID,
  name: 'Knock browser extension',
  secretHash: null,
  redirectUris: config(env).extensionRedirectUris,
  scopes: ['api'],
  postLogoutRedirectUris: [],
});

/** The one way to resolve a client id: a registered application, or the built-in extension. */
export const findClient = async (env: Env, clientId: string): Promise<OAuthClient | null> => {
  if (clientId === EXTENSION_CLIENT_ID) return extensionClient(env);
  if (!clientId || clientId.length > 128) return null;
  const app = await clientHoldersOf(env, clientId).application(clientId);
  if (!app) {
    forgetClient(clientId);
    return null;
  }
  const client = { clientId: app.client_id, name: app.name, secretHash: app.secret_hash, redirectUris: app.redirect_uris, scopes: app.scopes, postLogoutRedirectUris: app.post_logout_redirect_uris };
  remember(client);
  return client;
};

/*
 * Registered applications as this isolate last read them, so that authorizing and exchanging
 * codes for a popular application do not all queue on its one object. Applications are never
 * edited, only created and deleted, so a cached record is either exact or belongs to a deleted
 * application; and what a deleted one could still do with it is refused where the user's grants
 * live. Deleting an application marks it deleted in its `ClientHolders` object (which from then on
 * refuses to list a new holder, and a user's first code for an application needs that), then ends,
 * in each listed holder's grant authority, every grant, token and unredeemed code it had and
 * records the deletion there, so no code is issued for it again (User.issueCode). So with a cached
 * record of a deleted application: an authorization issues no code, a code exchange finds none,
 * a refresh finds its grant ended. Introspection and revocation, which reach no grant authority
 * first, always read the application afresh. The isolate that deletes forgets at once; others
 * within CLIENT_CACHE_MS, which only bounds how long a deleted record takes memory.
 */
const CLIENT_CACHE_MS = 60_000;
const CLIENT_CACHE_SIZE = 512;
const cachedClients = new Map<string, { client: OAuthClient; until: number }>();

const remember = (client: OAuthClient): void => {
  cachedClients.delete(client.clientId);
  cachedClients.set(client.clientId, { client, until: clock.now() + CLIENT_CACHE_MS });
  if (cachedClients.size > CLIENT_CACHE_SIZE) cachedClients.delete(cachedClients.keys().next().value as string);
};

export const forgetClient = (clientId: string): void => {
  cachedClients.delete(clientId);
};

/** `findClient`, answered from this isolate's cache when it read the application recently. */
export const findClientCached = async (env: Env, clientId: string): Promise<OAuthClient | null> => {
  const hit = cachedClients.get(clientId);
  const now = clock.now();
  if (hit && now < hit.until && hit.until - now <= CLIENT_CACHE_MS) return hit.client;
  return findClient(env, clientId);
};
