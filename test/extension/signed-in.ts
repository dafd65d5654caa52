import { vi } from 'vitest';
import { accountsItem, serversItem } from '../../extension/lib/stored-values';
import { setEntry, updateStored } from '../../extension/lib/stored-updates';
import { saveTokens } from '../../extension/lib/tokens';
import { createFakeKnock, SERVER, type FakeKnock } from './fake-knock';

/** `fetch` answered by the fake server whose origin the URL has (a network error for any other). */
export function serveFrom(...servers: FakeKnock[]) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      const server = servers.find((candidate) => new URL(url).origin === candidate.origin);
      if (!server) throw new TypeError('Failed to fetch');
      return server.fetch(input, init);
    }),
  );
}

/** The extension signed in (through OAuth) as alice to a fake server at `origin`, added after any already listed. */
export async function signedInTo(server: FakeKnock): Promise<FakeKnock> {
  const { origin } = server;
  await updateStored(serversItem, (servers) => [...servers, origin]);
  await saveTokens(origin, server.issueTokens());
  await setEntry(accountsItem, origin, { serverUrl: origin, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth' });
  return server;
}

/** A fake server answering `fetch`, and the extension signed in to it as alice. */
export async function signedInToFakeKnock(origin: string = SERVER) {
  const server = createFakeKnock(origin);
  serveFrom(server);
  return signedInTo(server);
}
