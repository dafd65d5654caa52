import { vi } from 'vitest';
import { accountsItem, serversItem } from '../../extension/lib/stored-values';
import { setEntry, updateStored } from '../../extension/lib/stored-updates';
import { saveTokens } from '../../extension/lib/tokens';
import { accessRequest, createFakeKnock, SERVER, type FakeKnock } from './fake-knock';

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
  await setEntry(accountsItem, origin, { serverUrl: origin, userId: 1, username: 'alice', name: 'Alice Owner', via: 'oauth', signedInAt: Date.now() });
  return server;
}

/** A fake server answering `fetch`, and the extension signed in to it as alice. */
export async function signedInToFakeKnock(origin: string = SERVER) {
  const server = createFakeKnock(origin);
  serveFrom(server);
  return signedInTo(server);
}

export const HOURS_AGO = (hours: number) => new Date(Date.now() - hours * 3600_000).toISOString();

/** Signed in as alice, owner of acme (bob waits) and maintainer of acme/website (carol waits); acme/quiet has none. */
export async function aliceWithTwoPendingRequests(): Promise<FakeKnock> {
  const server = await signedInToFakeKnock();
  server.addGroup(10, 'acme', 50, [accessRequest(2, 'bob', 'Bob Builder', HOURS_AGO(2))]);
  server.addProject(20, 'acme/website', 40, [accessRequest(3, 'carol', 'Carol Coder', HOURS_AGO(1))]);
  server.addProject(21, 'acme/quiet', 50, []);
  return server;
}
