// The list of servers, owned by the background: adding one (the options page has asked the
// browser for its host permission first), removing one (signed out first), and noticing when
// the browser's permissions change.

import { checkReach, refreshInbox } from './inbox';
import { authorizationServer } from './oauth';
import { normalizeServerUrl } from './server-url';
import { authorizationServersItem, serversItem, type ServerUrl } from './stored-values';
import { removeEntry, updateStored } from './stored-updates';
import { signOut } from './tokens';

/** What adding a server found. */
export interface AddedServer {
  serverUrl: ServerUrl;
  /** It was in the list already (nothing changed). */
  alreadyListed: boolean;
  /** The browser lets the extension reach it. */
  reachable: boolean;
  /** Why it does not answer as a Knock server (down, a wrong address); null when it does, or cannot be asked. */
  problem: string | null;
}

/**
 * Adds a server (its origin) to the end of the list, once; says whether the extension may reach
 * it and, when it may, whether it answers as a Knock server (its RFC 8414 metadata).
 */
export async function addServer(address: string): Promise<AddedServer> {
  const serverUrl = normalizeServerUrl(address);
  let alreadyListed = false;
  await updateStored(serversItem, (servers) => ((alreadyListed = servers.includes(serverUrl)) ? servers : [...servers, serverUrl]));
  const reachable = await checkReach(serverUrl);
  const problem = reachable
    ? await authorizationServer(serverUrl, { fresh: true }).then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      )
    : null;
  return { serverUrl, alreadyListed, reachable, problem };
}

/** Forgets a server, signed out first (ending the grant there). Out of the list first, so no late answer brings its list back. */
export async function removeServer(serverUrl: ServerUrl): Promise<void> {
  await updateStored(serversItem, (servers) => servers.filter((listed) => listed !== serverUrl));
  await signOut(serverUrl);
  await removeEntry(authorizationServersItem, serverUrl);
}

/** After the user granted or removed a host permission: every server's state follows. */
export async function permissionsChanged(): Promise<void> {
  await Promise.all((await serversItem.getValue()).map(checkReach));
  await refreshInbox();
}
