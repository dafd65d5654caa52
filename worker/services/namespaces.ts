import { directStanding, maySee, type Kind, type Standing } from '../auth/policy';
import { directory, type UserRow } from '../durable/directory';
import { namespaceObject, type AccessRequestRow, type ApprovedMemberRow, type MemberRow, type PageOf } from '../durable/namespace';
import type { EffectiveMember, ListFilter, NamespaceRow, NewNamespace } from '../durable/namespace-registry';
import { unwrap } from '../durable/result';
import type { Caller, Env } from '../env';
import type { Target } from '../api/finder';

/**
 * What happens to groups and projects (GitLab's services): each function applies one rule
 * through the Directory (paths, the membership index) and the group's or project's own Durable
 * Object (members, access requests, atomically), and raises the error a client sees when a rule
 * is broken. Routes map HTTP to these; presenters decide the JSON.
 */

/** The rows of a list that a page covers. */
export interface Window {
  offset: number;
  limit: number;
}

/** Where the caller stands on a group or project; `404 … Not Found` when they may not see it. */
export const standingOn = async (env: Env, target: Target): Promise<Standing> =>
  unwrap(await namespaceObject(env, target.ref.id).standingOf(target.ref, target.actor));

/** Raises `404 … Not Found` unless the caller may see it; internal and public need no lookup. */
export const assertVisible = async (env: Env, target: Target): Promise<void> => {
  if (maySee(target.ref.visibility, directStanding(target.actor.admin, 0))) return;
  await standingOn(env, target);
};

/** A new group or project in the path registry, and its own object with the creator as Owner. */
export const createNamespace = async (env: Env, input: NewNamespace): Promise<NamespaceRow> => {
  const row = unwrap(await directory(env).createNamespace(input));
  await namespaceObject(env, row.id).initialize({
    id: row.id,
    kind: input.kind,
    creatorId: row.creator_id,
    createdAt: row.created_at,
    visibility: row.visibility,
  });
  return row;
};

/** The caller's personal namespace (`/username`), made on first use. */
export const personalNamespace = async (env: Env, caller: Caller): Promise<NamespaceRow> =>
  unwrap(await directory(env).ensureUserNamespace({ username: caller.username, name: caller.name }));

export const listNamespaces = (env: Env, kind: Kind, filter: ListFilter, page: Window) =>
  directory(env).listNamespaces(kind.name, filter, page.offset, page.limit);

// ---- access requests ----

export const listAccessRequests = async (env: Env, target: Target, page: Window): Promise<PageOf<AccessRequestRow>> =>
  unwrap(await namespaceObject(env, target.ref.id).listAccessRequests(target.ref, target.actor, page.offset, page.limit));

export const requestAccess = async (env: Env, target: Target, caller: Caller): Promise<AccessRequestRow> =>
  unwrap(
    await namespaceObject(env, target.ref.id).requestAccess(target.ref, target.actor, target.namespace.request_access_enabled, {
      username: caller.username,
      name: caller.name,
    }),
  );

/** The request disappears and the member appears in one transaction, or neither happens. */
export const approveAccessRequest = async (env: Env, target: Target, userId: number, accessLevel: number): Promise<ApprovedMemberRow> =>
  unwrap(await namespaceObject(env, target.ref.id).approveAccessRequest(target.ref, target.actor, userId, accessLevel));

/** Deny (by a manager) or withdraw (by the requester). */
export const removeAccessRequest = async (env: Env, target: Target, userId: number): Promise<void> => {
  unwrap(await namespaceObject(env, target.ref.id).removeAccessRequest(target.ref, target.actor, userId));
};

// ---- members ----

export interface MemberOf {
  member: MemberRow;
  user: UserRow;
  createdBy: UserRow | null;
}

/** Direct members with their users (and who added them), in one Directory call for the page. */
export const listMembers = async (env: Env, target: Target, page: Window): Promise<PageOf<MemberOf>> => {
  const { total, items } = unwrap(await namespaceObject(env, target.ref.id).listMembers(target.ref, target.actor, page.offset, page.limit));
  const ids = items.flatMap((m) => (m.created_by === null ? [m.user_id] : [m.user_id, m.created_by]));
  const users = new Map((await directory(env).getUsers([...new Set(ids)])).map((u) => [u.id, u]));
  return {
    total,
    items: items.flatMap((member) => {
      const user = users.get(member.user_id);
      return user ? [{ member, user, createdBy: member.created_by === null ? null : users.get(member.created_by) ?? null }] : [];
    }),
  };
};

/** Members with those inherited from ancestor groups (the highest level each), from the index. */
export const listAllMembers = async (env: Env, target: Target, page: Window): Promise<{ total: number; members: EffectiveMember[] }> => {
  await assertVisible(env, target);
  // The index lags only while an outbox row waits; deliver those first (read-your-writes).
  const scope = [target.ref.id, ...target.ancestorIds];
  await Promise.all(scope.map((id) => namespaceObject(env, id).flushMembershipIndex()));
  return directory(env).listEffectiveMembers(scope, page.offset, page.limit);
};
