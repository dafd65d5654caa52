// A small typed client for Knock's `/api/v4` (GitLab REST v4 shapes). It does not know about tokens:
// the `fetch` it is given adds the Authorization header (and refreshes when needed).

import { apiErrorFrom } from './api-error';
import type { NamespaceKind } from './access-levels';
import type { AccessAlert, AccessRequest, ApprovedAccessRequest, Group, InboxAccessRequest, OwnAccessRequest, Project, RuleApprovedAccessRequest, User } from './api-types';

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

interface KnockClientOptions {
  /** The server's origin, e.g. `https://knock.example` (a trailing slash is fine). */
  serverUrl: string;
  fetch: Fetch;
}

const ROUTE: Record<NamespaceKind, string> = { group: 'groups', project: 'projects' };
const PER_PAGE = 100;
/** A guard against a server that never stops paginating. */
const MAX_PAGES = 50;

export type KnockClient = ReturnType<typeof createKnockClient>;

/** What an access request says (Knock's additions, each optional): why, the level, the end (a date or an ISO 8601 date-time). */
interface AccessAsk {
  reason?: string;
  access_level?: number;
  expires_at?: string;
}

/** Knock's owners' inbox as one answer: its items, and the ETag that names this version of it. */
interface InboxAnswer {
  etag: string | null;
  items: InboxAccessRequest[];
}

export function createKnockClient({ serverUrl, fetch }: KnockClientOptions) {
  const apiBase = `${serverUrl.replace(/\/+$/, '')}/api/v4`;

  /** A 304 (only ever the answer to a conditional request) is returned, not thrown. */
  async function call(method: string, path: string, query?: Record<string, string | number>, headers: Record<string, string> = {}): Promise<Response> {
    const url = new URL(`${apiBase}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, String(value));
    // no-store: the answers are the user's own and the caller keeps what it needs; a browser cache
    // would also add validators of its own and hide whether a 304 answered our If-None-Match.
    const response = await fetch(url.href, { method, headers: { Accept: 'application/json', ...headers }, cache: 'no-store' });
    if (!response.ok && response.status !== 304) throw await apiErrorFrom(response);
    return response;
  }

  async function json<T>(method: string, path: string, query?: Record<string, string | number>): Promise<T> {
    return (await call(method, path, query)).json() as Promise<T>;
  }

  /** Every item of a paginated list, following `X-Next-Page` from `first` (page 1's answer, when already asked). */
  async function all<T>(path: string, query: Record<string, string | number> = {}, first?: Response): Promise<T[]> {
    const items: T[] = [];
    let page = 1;
    let response = first ?? (await call('GET', path, { ...query, per_page: PER_PAGE, page }));
    for (let count = 1; ; count++) {
      items.push(...((await response.json()) as T[]));
      const next = Number(response.headers.get('X-Next-Page'));
      if (!Number.isInteger(next) || next <= page || count >= MAX_PAGES) break;
      page = next;
      response = await call('GET', path, { ...query, per_page: PER_PAGE, page });
    }
    return items;
  }

  const target = (kind: NamespaceKind, idOrPath: number | string) =>
    `/${ROUTE[kind]}/${encodeURIComponent(String(idOrPath))}`;

  return {
    currentUser: () => json<User>('GET', '/user'),
    groups: (minAccessLevel: number) => all<Group>('/groups', { min_access_level: minAccessLevel }),
    projects: (minAccessLevel: number) => all<Project>('/projects', { min_access_level: minAccessLevel }),
    accessRequests: (kind: NamespaceKind, id: number | string) =>
      all<AccessRequest>(`${target(kind, id)}/access_requests`),
    /**
     * Knock's owners' inbox (`GET /access_requests`), asked with `If-None-Match: etag` (RFC 9110
     * §13.1.2): null when the server answers 304 (the version `etag` names is still current). The
     * first page's ETag names the whole list's version; later pages are asked only when there are.
     */
    inbox: async (etag: string | null): Promise<InboxAnswer | null> => {
      const query = { per_page: PER_PAGE, page: 1 };
      const first = await call('GET', '/access_requests', query, etag ? { 'If-None-Match': etag } : {});
      if (first.status === 304) return null;
      const items = await all<InboxAccessRequest>('/access_requests', {}, first);
      return { etag: first.headers.get('ETag'), items };
    },
    /** The caller's own requests: pending, and how the others ended (Knock's `GET /user/access_requests`). */
    ownRequests: () => all<OwnAccessRequest>('/user/access_requests'),
    /** Break-glass grants where the caller is an Owner, others' access ending soon where they manage (Knock's `GET /user/access_alerts`). */
    accessAlerts: () => json<AccessAlert[]>('GET', '/user/access_alerts'),
    /** Without a level, the server grants what was asked (and the end asked). More approvals needed: the request (202). */
    approve: (kind: NamespaceKind, id: number | string, userId: number, accessLevel?: number) =>
      json<ApprovedAccessRequest | AccessRequest>('PUT', `${target(kind, id)}/access_requests/${userId}/approve`, accessLevel === undefined ? {} : { access_level: accessLevel }),
    deny: async (kind: NamespaceKind, id: number | string, userId: number): Promise<void> => {
      await call('DELETE', `${target(kind, id)}/access_requests/${userId}`);
    },
    /**
     * Asks for access to a group or project, by id or full path (`acme/website`), saying why, at
     * which level and until when (each optional). A rule may grant it at once (`approved_by_rule`).
     */
    requestAccess: (kind: NamespaceKind, idOrPath: number | string, ask: AccessAsk = {}) =>
      json<AccessRequest | RuleApprovedAccessRequest>(
        'POST',
        `${target(kind, idOrPath)}/access_requests`,
        Object.fromEntries(Object.entries(ask).filter((entry): entry is [string, string | number] => entry[1] !== undefined)),
      ),
  };
}
