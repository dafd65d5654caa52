// Approving, denying and asking for access, with the cached inbox and badge kept in step.

import type { NamespaceKind } from '../../shared/access-levels';
import type { AccessRequest } from '../../shared/api-types';
import { keepInbox, knockClient, noteDecision, rememberRateLimit } from './inbox-refresh';
import type { RequestTarget } from './messaging';
import { withoutRequest } from './pending-requests';
import { inboxItem } from './stored-values';

async function settled(target: RequestTarget): Promise<void> {
  noteDecision(target);
  const inbox = await inboxItem.getValue();
  if (inbox) await keepInbox(withoutRequest(inbox, target.kind, target.sourceId, target.userId));
}

async function reportingRateLimits<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await rememberRateLimit(error);
    throw error;
  }
}

export async function approve(target: RequestTarget & { accessLevel: number }): Promise<void> {
  const client = await knockClient();
  await reportingRateLimits(() => client.approve(target.kind, target.sourceId, target.userId, target.accessLevel));
  await settled(target);
}

export async function deny(target: RequestTarget): Promise<void> {
  const client = await knockClient();
  await reportingRateLimits(() => client.deny(target.kind, target.sourceId, target.userId));
  await settled(target);
}

export async function requestAccess({ kind, path }: { kind: NamespaceKind; path: string }): Promise<AccessRequest> {
  const client = await knockClient();
  return reportingRateLimits(() => client.requestAccess(kind, path.trim().replace(/^\/+|\/+$/g, '')));
}
