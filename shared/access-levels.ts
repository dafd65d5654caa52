// Access levels and who may grant which (GitLab's access levels). No imports: the Worker and the extension
// both read this table.

export type NamespaceKind = 'group' | 'project';

export interface AccessLevel {
  readonly value: number;
  readonly name: string;
}

export const ACCESS_LEVELS: readonly AccessLevel[] = [
  { value: 0, name: 'No access' },
  { value: 5, name: 'Minimal access' },
  { value: 10, name: 'Guest' },
  { value: 15, name: 'Planner' },
  { value: 20, name: 'Reporter' },
  { value: 30, name: 'Developer' },
  { value: 40, name: 'Maintainer' },
  { value: 50, name: 'Owner' },
];

const NO_ACCESS = 0;
export const MINIMAL_ACCESS = 5;
export const DEVELOPER = 30;
export const MAINTAINER = 40;
export const OWNER = 50;

/** The level an approval grants when the approver does not choose one. */
export const DEFAULT_APPROVAL_LEVEL = DEVELOPER;

/** The lowest level that may list, approve and deny access requests on a group or project. */
export const APPROVER_MINIMUM: Readonly<Record<NamespaceKind, number>> = {
  group: OWNER,
  project: MAINTAINER,
};

export function isAccessLevel(value: unknown): value is number {
  return typeof value === 'number' && ACCESS_LEVELS.some((level) => level.value === value);
}

export function accessLevelName(value: number): string {
  return ACCESS_LEVELS.find((level) => level.value === value)?.name ?? `Level ${value}`;
}

/**
 * Whether an approver holding `approverLevel` on a `kind` may grant `level` (GitLab's rules):
 * never "No access"; "Minimal access" only on groups; Owner on a project only by an Owner.
 */
export function mayGrant(kind: NamespaceKind, approverLevel: number, level: number): boolean {
  if (!isAccessLevel(level) || level === NO_ACCESS) return false;
  if (approverLevel < APPROVER_MINIMUM[kind]) return false;
  if (level === MINIMAL_ACCESS) return kind === 'group';
  if (level === OWNER && kind === 'project') return approverLevel >= OWNER;
  return true;
}

/** The levels an approver holding `approverLevel` may grant on a `kind`, lowest first. */
export function levelsAllowedToApprove(kind: NamespaceKind, approverLevel: number): AccessLevel[] {
  return ACCESS_LEVELS.filter((level) => mayGrant(kind, approverLevel, level.value));
}
