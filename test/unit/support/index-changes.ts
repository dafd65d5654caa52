import type { MembershipChange, RequestChange } from '../../../worker/durable/namespace-registry';

/** What a group's or project's object pushes to its index partition, as the unit tests write it. */

/** A member change (level 0: no longer a member). */
export const memberChange = (userId: number, accessLevel: number, version: number, expiresAt: string | null = null): MembershipChange => ({
  userId,
  accessLevel,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: null,
  expiresAt,
  version,
});

/** A request made (pending), made on 2 January 2026. */
export const pendingRequest = (userId: number, version: number): RequestChange => ({
  userId,
  pending: true,
  version,
  requestedAt: '2026-01-02T00:00:00.000Z',
  outcome: null,
  grantedLevel: null,
  expiresAt: null,
  decidedBy: null,
  decidedAt: null,
  details: null,
});
