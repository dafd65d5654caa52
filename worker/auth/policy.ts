import { APPROVER_MINIMUM, DEVELOPER, mayGrant, MAINTAINER, OWNER, type NamespaceKind } from '../../shared/access-levels';
import type { Visibility } from '../../shared/api-types';
import { VISIBILITIES } from '../../shared/schemas';
import { problems, type Problem } from '../errors';

/**
 * Who may do what on groups and projects (GitLab's access request rules: Maintainer on projects, Owner on groups). Everything that differs between the two
 * kinds is a field of the kind below; the routes, the Durable Object and the presenters are
 * written once and read these fields.
 */
export interface Kind {
  readonly name: NamespaceKind;
  /** The collection under /api/v4. */
  readonly route: 'groups' | 'projects';
  readonly label: 'Group' | 'Project';
  /** What a caller who cannot see it (or it does not exist) is told. */
  readonly notFound: () => Problem;
  /** The lowest effective level that may list, approve and deny access requests. */
  readonly managesRequests: number;
  /** The lowest level on the parent group that may create one inside it. */
  readonly createsInParent: number;
  /** The lowest effective level that may add, edit and remove members (GitLab's `admin_*_member`). */
  readonly managesMembers: number;
  /** The lowest level that may change name, description and `request_access_enabled`. */
  readonly editsSettings: number;
  /** The lowest level that may change path or visibility, or delete it. */
  readonly ownsSettings: number;
  /** Whether its last direct Owner may neither leave nor be removed or demoted (GitLab's groups). */
  readonly keepsAnOwner: boolean;
  /** The lowest effective level that may read its audit events and manage its webhooks. */
  readonly managesEvents: number;
}

export const KINDS: Readonly<Record<NamespaceKind, Kind>> = {
  group: {
    name: 'group',
    route: 'groups',
    label: 'Group',
    notFound: () => problems.notFound('Group'),
    managesRequests: APPROVER_MINIMUM.group,
    createsInParent: OWNER,
    managesMembers: APPROVER_MINIMUM.group,
    editsSettings: OWNER,
    ownsSettings: OWNER,
    keepsAnOwner: true,
    managesEvents: OWNER,
  },
  project: {
    name: 'project',
    route: 'projects',
    label: 'Project',
    notFound: () => problems.notFound('Project'),
    managesRequests: APPROVER_MINIMUM.project,
    // GitLab's default lets Developers create projects in a group; Knock asks for Maintainer.
    createsInParent: MAINTAINER,
    managesMembers: APPROVER_MINIMUM.project,
    editsSettings: MAINTAINER,
    ownsSettings: OWNER,
    keepsAnOwner: false,
    managesEvents: MAINTAINER,
  },
};


/** Where a caller stands on one group or project. Levels are 0 when there is no membership. */
export interface Standing {
  admin: boolean;
  /** Direct membership of this group or project. */
  direct: number;
  /** The highest membership of an ancestor group. */
  inherited: number;
}

/** Effective access: the highest of direct and inherited; an administrator is Owner everywhere. */
export const effectiveLevel = (s: Standing): number => (s.admin ? OWNER : Math.max(s.direct, s.inherited));

/** Every API caller is authenticated, so internal and public are visible to all of them. */
export const maySee = (visibility: Visibility, s: Standing): boolean => visibility !== 'private' || effectiveLevel(s) > 0;

export const mayManageRequests = (kind: Kind, s: Standing): boolean => effectiveLevel(s) >= kind.managesRequests;

/** A level that no approver may ever grant on this kind is a bad parameter (400), not a 403. */
export const isGrantableLevel = (kind: Kind, level: number): boolean => mayGrant(kind.name, OWNER, level);

/** Whether this approver may grant `level` (Owner on a project needs an Owner). */
export const mayGrantLevel = (kind: Kind, s: Standing, level: number): boolean => mayGrant(kind.name, effectiveLevel(s), level);

/** Already a member, directly or through an ancestor group (administrators have access already). */
export const hasAccess = (s: Standing): boolean => effectiveLevel(s) > 0;

export const mayCreateIn = (kind: Kind, parent: Standing): boolean => effectiveLevel(parent) >= kind.createsInParent;

/**
 * Where a caller stands before anyone has looked at ancestor groups. Every predicate above only
 * turns from false to true as the effective level rises, so one that holds on this standing holds
 * whatever the ancestors add: the inherited level is worth looking up only when it does not.
 */
export const directStanding = (admin: boolean, direct: number): Standing => ({ admin, direct, inherited: 0 });

/** A group or project is never more visible than the group it lives in, as in GitLab. */
export const visibilityAllowedUnder = (visibility: Visibility, parentVisibility: Visibility): boolean =>
  VISIBILITIES.indexOf(visibility) <= VISIBILITIES.indexOf(parentVisibility);

export const mayManageMembers = (kind: Kind, s: Standing): boolean => effectiveLevel(s) >= kind.managesMembers;

/**
 * Whether this caller may edit or remove a member who holds `level` now: a member manager, and an
 * Owner when that member is an Owner (a project's Maintainer may not touch its Owners).
 */
export const mayManageMemberAt = (kind: Kind, s: Standing, level: number): boolean =>
  mayManageMembers(kind, s) && (level < OWNER || effectiveLevel(s) >= OWNER);

/** Settings of a group or project: path and visibility need `ownsSettings`, the rest `editsSettings`. */
export const mayEditSettings = (kind: Kind, s: Standing, touchesPathOrVisibility: boolean): boolean =>
  effectiveLevel(s) >= (touchesPathOrVisibility ? kind.ownsSettings : kind.editsSettings);

export const mayDelete = (kind: Kind, s: Standing): boolean => effectiveLevel(s) >= kind.ownsSettings;

/**
 * A personal access token may be seen and revoked by its user and by administrators; an
 * impersonation token only by administrators, although it acts as its user (GitLab's
 * PersonalAccessTokenPolicy).
 */
export const mayManageToken = (caller: { id: number; admin: boolean }, token: { user_id: number; impersonation: boolean }): boolean =>
  caller.admin || (token.user_id === caller.id && !token.impersonation);

/**
 * Audit events and webhooks (GitLab's group and project audit events and webhooks APIs): a group's
 * Owners, a project's Maintainers and Owners.
 */
export const mayManageEvents = (kind: Kind, s: Standing): boolean => effectiveLevel(s) >= kind.managesEvents;

/**
 * Whose audit events of a group or project a caller may read (GitLab's audit events API docs):
 * everyone's for who may manage its events (a group's Owners, a project's Maintainers and
 * Owners), their own for a Developer or Maintainer below that, none for anyone else.
 */
export const auditEventReach = (kind: Kind, s: Standing): 'all' | 'own' | 'none' =>
  mayManageEvents(kind, s) ? 'all' : effectiveLevel(s) >= DEVELOPER ? 'own' : 'none';
