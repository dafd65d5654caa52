// The commands that change something on a server: approving and denying (through the inbox,
// which shows the outcome at once), asking for access and withdrawing one's own request.

import type { AccessRequest, RuleApprovedAccessRequest } from '../../shared/api-types';
import { decide, knockClient, recordWithdrawal, rememberRateLimit } from './inbox';
import type { KnockProtocol } from './messaging';
import { serverName } from './server-url';
import { accountsItem } from './stored-values';
import { SignedOutError } from './tokens';

export async function approve(target: Parameters<KnockProtocol['approve']>[0]): Promise<void> {
  const client = await knockClient(target.serverUrl);
  await decide(target, () => client.approve(target.kind, target.sourceId, target.userId, target.accessLevel));
}

export async function deny(target: Parameters<KnockProtocol['deny']>[0]): Promise<void> {
  const client = await knockClient(target.serverUrl);
  await decide(target, () => client.deny(target.kind, target.sourceId, target.userId));
}

/** An end `hours` from now, as an ISO 8601 date-time to the minute (the server keeps minutes). */
const endAfter = (hours: number, now = Date.now()): string => `${new Date(now + hours * 3_600_000).toISOString().slice(0, 16)}Z`;

export async function requestAccess({ serverUrl, kind, path, reason, accessLevel, hours }: Parameters<KnockProtocol['requestAccess']>[0]): Promise<AccessRequest | RuleApprovedAccessRequest> {
  const client = await knockClient(serverUrl);
  const ask = { reason: reason?.trim() || undefined, access_level: accessLevel, expires_at: hours ? endAfter(hours) : undefined };
  try {
    return await client.requestAccess(kind, path.trim().replace(/^\/+|\/+$/g, ''), ask);
  } catch (error) {
    await rememberRateLimit(serverUrl, error);
    throw error;
  }
}

/** GitLab withdraws a request with the same DELETE an owner denies it with, naming the requester: oneself. */
export async function withdraw({ serverUrl, kind, sourceId }: Parameters<KnockProtocol['withdraw']>[0]): Promise<void> {
  const client = await knockClient(serverUrl);
  const account = (await accountsItem.getValue())[serverUrl];
  if (!account) throw new SignedOutError(`You are signed out of ${serverName(serverUrl)}.`);
  try {
    await client.deny(kind, sourceId, account.userId);
  } catch (error) {
    await rememberRateLimit(serverUrl, error);
    throw error;
  }
  await recordWithdrawal(serverUrl, kind, sourceId);
}
