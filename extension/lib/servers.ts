// The list of servers, owned by the background: adding one (the options page has asked the
// browser for its host permission first), removing one (signed out first), and noticing when
// the browser's permissions change.

import { checkReach, refreshInbox } from './inbox';
import { normalizeServerUrl, serverName } from './server-url';
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
  /** Why it does not answer as a Knock server (down, a wrong address); null when it does, or may not be asked. */
  problem: string | null;
}

/**
 * Adds a server (its origin) to the end of the list, once; says whether the extension may reach
 * it and, when it may, whether it answers.
 */
export async function addServer(address: string): Promise<AddedServer> {
  const serverUrl = normalizeServerUrl(address);
  let alreadyListed = false;
  await updateStored(serversItem, (servers) => ((alreadyListed = servers.includes(serverUrl)) ? servers : [...servers, serverUrl]));
  const reachable = await checkReach(serverUrl);
  return { serverUrl, alreadyListed, reachable, problem: reachable ? await unanswered(serverUrl) : null };
}

/** Why a server does not answer as Knock does (`GET /api/v4/version`: 200, or 401 without a token); null when it does. */
async function unanswered(serverUrl: ServerUrl): Promise<string | null> {
  try {
    const response = await fetch(`${serverUrl}/api/v4/version`, { signal: AbortSignal.timeout(10_000) });
    return response.status === 200 || response.status === 401 ? null : `it answers ${response.status} to GET /api/v4/version.`;
  } catch {
    return `Knock could not reach ${serverName(serverUrl)}. Is the address right, and the server running?`;
  }
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
