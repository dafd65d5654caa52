import { vi } from 'vitest';
import { accountItem, serverUrlItem } from '../../extension/lib/stored-values';
import { saveTokens } from '../../extension/lib/tokens';
import { createFakeKnock, SERVER } from './fake-knock';

/** A fake server answering `fetch`, and the extension signed in to it as alice. */
export async function signedInToFakeKnock() {
  const server = createFakeKnock();
  vi.stubGlobal('fetch', vi.fn(server.fetch));
  await serverUrlItem.setValue(SERVER);
  await saveTokens(server.issueTokens());
  await accountItem.setValue({ serverUrl: SERVER, userId: 1, username: 'alice', name: 'Alice Owner' });
  return server;
}
