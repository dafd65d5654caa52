import { ACCESS_LEVELS, type AccessLevel } from '../../../shared/access-levels';
import { mayGrantLevel, type Kind, type Standing } from '../../auth/policy';
import { todayUtc } from '../../clock';
import { treeIndex } from '../../durable/index-partition/index-partition';
import type { NamespaceRow } from '../../durable/namespace-registry';
import type { Target } from '../../services/finder';
import * as service from '../../services/namespaces';
import type { Flash } from '../flash';
import type { PageContext } from '../viewer';

/**
 * Everything a section of a group's or project's page reads: the group or project, where the
 * viewer stands on it (what the policy judges), and the page's own state. Each section is one
 * component over this view that loads its own data through the services and shows its buttons
 * only when the policy says the viewer may.
 */
export interface NamespaceView {
  c: PageContext;
  kind: Kind;
  target: Target;
  row: NamespaceRow;
  standing: Standing;
  /** Whether the viewer has a pending access request here. */
  pending: boolean;
  /** The tab shown. */
  tab: Tab;
  /** The group's or project's address (`/groups/acme/sub`, `/acme/website`, its overview). */
  homePath: string;
  /** The shown tab's address, where its forms come back to, and the current URL (for pagination). */
  pagePath: string;
  url: string;
  /** Where the page's forms post (by id, so a rename does not break an open page). */
  actions: string;
  flash: Flash;
  /** The earliest expiry date a membership form offers: today (see `membershipExpiry`). */
  earliestExpiry: string;
}

/**
 * The tabs of a group's or project's pages, each at its own address below the page's, as
 * GitLab's: the overview, Members (with Access requests as `?tab=access_requests`), Settings
 * (`/edit` for a project, `/-/edit` for a group), Webhooks and Audit events.
 */
export interface Tab {
  id: 'overview' | 'members' | 'access_requests' | 'settings' | 'hooks' | 'audit_events';
  label: string;
  /** The path after the page's address. */
  suffix(kind: Kind): string;
  /** The query that picks it among tabs of one path. */
  query?: string;
}

export const TABS: readonly Tab[] = [
  { id: 'overview', label: 'Overview', suffix: () => '' },
  { id: 'members', label: 'Members', suffix: (kind) => `/-/${kind.name}_members` },
  { id: 'access_requests', label: 'Access requests', suffix: (kind) => `/-/${kind.name}_members`, query: 'tab=access_requests' },
  { id: 'settings', label: 'Settings', suffix: (kind) => (kind.name === 'project' ? '/edit' : '/-/edit') },
  { id: 'hooks', label: 'Webhooks', suffix: () => '/-/hooks' },
  { id: 'audit_events', label: 'Audit events', suffix: () => '/-/audit_events' },
];

/** The tab `id`. */
export const tabNamed = (id: Tab['id']): Tab => TABS.find((t) => t.id === id)!;

/** A tab's address below a page's. */
export const tabPath = (kind: Kind, home: string, tab: Tab) => `${home}${tab.suffix(kind)}${tab.query ? `?${tab.query}` : ''}`;

/** Which tab a path below `/groups` or at the top asks for, and the group's or project's part of it. */
export const splitTab = (kind: Kind, path: string, search: URLSearchParams): { ref: string; tab: Tab } => {
  for (const tab of [...TABS].reverse()) {
    const suffix = tab.suffix(kind);
    if (!suffix || !path.endsWith(suffix) || path.length === suffix.length) continue;
    if (tab.query && search.get('tab') !== tab.query.split('=')[1]) continue;
    return { ref: path.slice(0, -suffix.length), tab };
  }
  return { ref: path, tab: TABS[0]! };
};

/** The levels a viewer standing so may grant on this kind, lowest first (the policy decides). */
export const grantableLevels = (kind: Kind, standing: Standing): AccessLevel[] => ACCESS_LEVELS.filter((l) => mayGrantLevel(kind, standing, l.value));

/**
 * The address of a group's or project's page, the `web_url` of the API's shapes: GitLab's
 * `/groups/acme/sub` for a group and `/acme/website` for a project (the `/projects/...` address
 * redirects there).
 */
export const pagePathOf = (kind: Kind, fullPath: string) => (kind.name === 'project' ? `/${fullPath}` : `/${kind.route}/${fullPath}`);

/** Where the forms of a group's or project's page post. */
export const actionsOf = (kind: Kind, id: number) => `/${kind.route}/${id}/-`;

/** Loads the view of a group or project the viewer may see (else the service raises its 404). */
export const loadView = async (c: PageContext, kind: Kind, target: Target, flash: Flash, tab: Tab): Promise<NamespaceView> => {
  const [standing, row, pending] = await Promise.all([
    service.standingOn(c.env, target),
    service.describe(c.env, kind, target),
    treeIndex(c.env, target.id, target.ancestorIds).pendingRequestsOf(c.var.viewer.user.id),
  ]);
  return {
    c,
    kind,
    target,
    row,
    standing,
    pending: pending.some((p) => p.id === target.id),
    tab,
    homePath: pagePathOf(kind, row.full_path),
    pagePath: tabPath(kind, pagePathOf(kind, row.full_path), tab),
    url: c.req.url,
    actions: actionsOf(kind, target.id),
    flash,
    earliestExpiry: todayUtc(),
  };
};
