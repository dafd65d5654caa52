// The list of servers, owned by the background: adding one (the options page has asked the
// browser for its host permission first), removing one (signed out first), and noticing when
// the browser's permissions change.

import { checkReach, refreshInbox } from './inbox';
import { normalizeServerUrl } from './server-url';
import { authorizationServersItem, serversItem, type ServerUrl } from './stored-values';
import { removeEntry, updateStored } from './stored-updates';
import { signOut } from './tokens';

/** Adds a server (its origin) to the end of the list, once; says whether the extension may reach it. */
export async function addServer(address: string): Promise<{ serverUrl: ServerUrl; reachable: boolean }> {
  const serverUrl = normalizeServerUrl(address);
  await updateStored(serversItem, (servers) => (servers.includes(serverUrl) ? servers : [...servers, serverUrl]));
  return { serverUrl, reachable: await checkReach(serverUrl) };
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
