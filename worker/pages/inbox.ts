import { ACCESS_LEVELS, type AccessLevel } from '../../shared/access-levels';
import { withNamespace, type FinderContext } from '../api/finder';
import { KINDS, mayGrantLevel, type Kind, type Standing } from '../auth/policy';
import type { AccessRequestRow } from '../durable/namespace';
import type { Caller } from '../env';
import { ApiError } from '../errors';
import * as service from '../services/namespaces';
import { PER_PAGE } from './components';

/** One pending request the viewer may answer, with where it is and the levels they may grant. */
export interface InboxItem {
  kind: Kind;
  namespace: { id: number; fullPath: string; fullName: string };
  request: AccessRequestRow;
  levels: AccessLevel[];
}

export interface Inbox {
  total: number;
  items: InboxItem[];
  /** More groups or projects than were looked at: the rest are on their own pages. */
  truncated: boolean;
}

/** How many groups (and projects), and requests of each, this gathering looks at. */
const SCAN_LIMIT = 100;

/** The levels a viewer standing so may grant on this kind, lowest first (the policy decides). */
export const grantableLevels = (kind: Kind, standing: Standing): AccessLevel[] => ACCESS_LEVELS.filter((l) => mayGrantLevel(kind, standing, l.value));

/**
 * The pending access requests the viewer may approve or deny, oldest first, one page of them.
 * Gathered through the services the API uses: the groups where the viewer is an Owner and the
 * projects where they are a Maintainer or Owner (directly or through a group, from the
 * membership index), then each one's own list, which its Durable Object checks again. Looks at
 * up to SCAN_LIMIT groups and projects of each kind, so an administrator sees the requests where
 * they are a member; any other group's requests are on its page.
 *
 * The one place the dashboard gets its inbox: an index of a user's pending requests
 * (`GET /api/v4/access_requests`) replaces this function.
 */
export const pendingRequestsFor = async (c: FinderContext, viewer: Caller, page: number): Promise<Inbox> => {
  let truncated = false;
  const perKind = await Promise.all(
    Object.values(KINDS).map(async (kind) => {
      const filter = { userId: viewer.id, admin: false, minAccessLevel: kind.managesRequests };
      const { total, namespaces } = await service.listNamespaces(c.env, kind, filter, { offset: 0, limit: SCAN_LIMIT });
      if (total > namespaces.length) truncated = true;
      const lists = await Promise.all(
        namespaces.map(async (row): Promise<InboxItem[]> => {
          // The listing gives the effective level, which is all the grant rule reads.
          const standing: Standing = { admin: viewer.admin, direct: row.access_level ?? 0, inherited: 0 };
          const namespace = { id: row.id, fullPath: row.full_path, fullName: row.full_name };
          try {
            const pending = await withNamespace(c, kind, row.id, (target) => service.listAccessRequests(c.env, target, { offset: 0, limit: SCAN_LIMIT }));
            if (pending.total > pending.items.length) truncated = true;
            return pending.items.map((request) => ({ kind, namespace, request, levels: grantableLevels(kind, standing) }));
          } catch (e) {
            // Changed since the index was read (deleted, or the viewer's level lowered): nothing to answer.
            if (e instanceof ApiError) return [];
            throw e;
          }
        }),
      );
      return lists.flat();
    }),
  );
  const all = perKind.flat().sort((a, b) => a.request.requested_at.localeCompare(b.request.requested_at));
  const start = (page - 1) * PER_PAGE;
  return { total: all.length, items: all.slice(start, start + PER_PAGE), truncated };
};
