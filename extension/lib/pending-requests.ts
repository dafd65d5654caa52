// What the popup lists for one server: every pending access request the signed-in user may act
// on there, grouped by the group or project it is for. Knock says it in one answer (its owners'
// inbox); a plain GitLab is asked group by group and project by project.

import { APPROVER_MINIMUM, OWNER, type NamespaceKind } from '../../shared/access-levels';
import { ApiError } from '../../shared/api-error';
import type { AccessRequest, InboxAccessRequest } from '../../shared/api-types';
import type { KnockClient } from '../../shared/client';

/** A group or project with requests waiting for the signed-in user. */
export interface PendingSource {
  kind: NamespaceKind;
  id: number;
  /** `acme` or `acme/website`. */
  fullPath: string;
  /** What to call it on screen: `Acme` or `Acme / Website`. */
  title: string;
  /** The signed-in user's effective level there: it decides which levels they may grant. */
  approverLevel: number;
  requests: AccessRequest[];
}

/** What one server lists: its sources with at least one request, ordered by path. */
interface FetchedList {
  /** When the server was asked (ms since epoch). */
  fetchedAt: number;
  sources: PendingSource[];
}

/** Identifies one request to one source on one server, e.g. `https://knock.example project:7:12`. */
export function requestKey(serverUrl: string, source: Pick<PendingSource, 'kind' | 'id'>, userId: number): string {
  return `${serverUrl} ${source.kind}:${source.id}:${userId}`;
}

/** The requests waiting on every server. */
export function countRequests(inboxes: Record<string, { sources: PendingSource[] }> | null | undefined): number {
  return Object.values(inboxes ?? {}).reduce(
    (sum, inbox) => sum + inbox.sources.reduce((count, source) => count + source.requests.length, 0),
    0,
  );
}

/** The sources without one request (after it was approved or denied). */
export function withoutRequest(sources: PendingSource[], kind: NamespaceKind, sourceId: number, userId: number): PendingSource[] {
  return sources
    .map((source) =>
      source.kind === kind && source.id === sourceId
        ? { ...source, requests: source.requests.filter((request) => request.id !== userId) }
        : source,
    )
    .filter((source) => source.requests.length > 0);
}

/** Knock's inbox (oldest first) as the popup lists it: by group or project, ordered by path. */
export function sourcesFromInbox(items: InboxAccessRequest[]): PendingSource[] {
  const sources = new Map<string, PendingSource>();
  for (const { source_type, source_id, source_full_path, source_name, max_access_level, ...request } of items) {
    const kind = source_type === 'Namespace' ? 'group' : 'project';
    const key = `${kind}:${source_id}`;
    const source = sources.get(key) ?? { kind, id: source_id, fullPath: source_full_path, title: source_name, approverLevel: max_access_level, requests: [] };
    source.requests.push(request);
    sources.set(key, source);
  }
  return sortSources([...sources.values()]);
}

const PARALLEL_LISTS = 4;

/**
 * Asks the server for the groups where the user is Owner and the projects where they are
 * Maintainer or above (and which of those they own, since only an Owner may grant Owner on a
 * project), then for the pending requests of each.
 */
export async function fetchPerSource(client: KnockClient, now: () => number = Date.now): Promise<FetchedList> {
  const [user, groups, projects, ownedProjects] = await Promise.all([
    client.currentUser(),
    client.groups(APPROVER_MINIMUM.group),
    client.projects(APPROVER_MINIMUM.project),
    client.projects(OWNER),
  ]);
  const owned = new Set(ownedProjects.map((project) => project.id));
  const candidates: Omit<PendingSource, 'requests'>[] = [
    ...groups.map((group) => ({
      kind: 'group' as const,
      id: group.id,
      fullPath: group.full_path,
      title: group.name,
      approverLevel: OWNER,
    })),
    ...projects.map((project) => ({
      kind: 'project' as const,
      id: project.id,
      fullPath: project.path_with_namespace,
      title: project.name_with_namespace ?? project.name,
      approverLevel: user.is_admin || owned.has(project.id) ? OWNER : APPROVER_MINIMUM.project,
    })),
  ];
  const sources = await mapInBatches(candidates, PARALLEL_LISTS, async (candidate) => ({
    ...candidate,
    requests: await requestsOrNoneIfGone(client, candidate),
  }));
  return { fetchedAt: now(), sources: sortSources(sources.filter((source) => source.requests.length > 0)) };
}

/** Sources in the order the popup lists them: by path, a group before a project of the same path. */
export function sortSources(sources: PendingSource[]): PendingSource[] {
  return [...sources].sort((a, b) => a.fullPath.localeCompare(b.fullPath) || a.kind.localeCompare(b.kind));
}

/** A group or project deleted (404) or taken from us (403) since it was listed has nothing for us. */
async function requestsOrNoneIfGone(client: KnockClient, source: Omit<PendingSource, 'requests'>) {
  try {
    return await client.accessRequests(source.kind, source.id);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 403 || error.status === 404)) return [];
    throw error;
  }
}

async function mapInBatches<T, R>(items: T[], size: number, map: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(map))));
  }
  return results;
}
