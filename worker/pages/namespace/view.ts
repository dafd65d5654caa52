import { ACCESS_LEVELS, type AccessLevel } from '../../../shared/access-levels';
import { mayGrantLevel, type Kind, type Standing } from '../../auth/policy';
import { clock } from '../../clock';
import { treeIndex } from '../../durable/index-partition/index-partition';
import type { NamespaceRow } from '../../durable/namespace-registry';
import type { Target } from '../../services/finder';
import * as service from '../../services/namespaces';
import { tomorrowUtc } from '../components';
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
  /** The page's canonical address (`/groups/acme/sub`) and the current URL (for pagination). */
  pagePath: string;
  url: string;
  /** Where the page's forms post (by id, so a rename does not break an open page). */
  actions: string;
  flash: Flash;
  /** The earliest expiry date a form offers. */
  tomorrow: string;
}

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
export const loadView = async (c: PageContext, kind: Kind, target: Target, flash: Flash): Promise<NamespaceView> => {
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
    pagePath: pagePathOf(kind, row.full_path),
    url: c.req.url,
    actions: actionsOf(kind, target.id),
    flash,
    tomorrow: tomorrowUtc(clock.now()),
  };
};
