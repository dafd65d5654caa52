// The commands that change something on a server: approving and denying (through the inbox,
// which shows the outcome at once) and asking for access.

import type { AccessRequest } from '../../shared/api-types';
import { decide, knockClient, rememberRateLimit } from './inbox';
import type { KnockProtocol } from './messaging';

export async function approve(target: Parameters<KnockProtocol['approve']>[0]): Promise<void> {
  const client = await knockClient(target.serverUrl);
  await decide(target, () => client.approve(target.kind, target.sourceId, target.userId, target.accessLevel));
}

export async function deny(target: Parameters<KnockProtocol['deny']>[0]): Promise<void> {
  const client = await knockClient(target.serverUrl);
  await decide(target, () => client.deny(target.kind, target.sourceId, target.userId));
}

export async function requestAccess({ serverUrl, kind, path }: Parameters<KnockProtocol['requestAccess']>[0]): Promise<AccessRequest> {
  const client = await knockClient(serverUrl);
  try {
    return await client.requestAccess(kind, path.trim().replace(/^\/+|\/+$/g, ''));
  } catch (error) {
    await rememberRateLimit(serverUrl, error);
    throw error;
  }
}
