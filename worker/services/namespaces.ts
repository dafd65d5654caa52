import { directStanding, mayDelete, mayEditSettings, maySee, type Kind, type Standing } from '../auth/policy';
import { directory } from '../durable/directory/directory';
import type { AccessRequestRules } from '../../shared/api-types';
import type { StoredRules } from '../durable/namespace/request-rules';
import {
  namespaceObject,
  type AccessAsk,
  type AccessRequestRow,
  type ApprovalChoice,
  type ApprovalOutcome,
  type MemberRow,
  type NamespaceResult,
  type PageOf,
  type RequestOutcomeRow,
} from '../durable/namespace/types';
import { listsOnlyReached, snapshotOf, type EffectiveMember, type ListFilter, type NamespaceChanges, type NamespaceRow, type NewNamespace } from '../durable/namespace-registry';
import { locateNamespace, treeIndex, userIndexPartitions, type EffectiveMembership, type IndexPartitionStub, type UserNames } from '../durable/index-partition/index-partition';
import { unwrap } from '../durable/result';
import type { InboxFilter } from '../durable/user/inbox';
import type { Caller, Env } from '../env';
import { enforceLimit, LIMITS } from '../edge/rate-limits';
import { problems, raise } from '../errors';
import { StaleTarget, type Target } from './finder';
import { forgetRecord, rememberRecord } from './registry-cache';
import { recordOf } from './finder';

/**
 * What happens to groups and projects (GitLab's services): each function applies one rule
 * through the Directory (the path registry), the index partitions (what spans groups and
 * projects) and the group's or project's own Durable Object (members, access requests,
 * atomically), and raises the error a client sees when a rule
 * is broken. Routes map HTTP to these; presenters decide the JSON.
 */

/** The rows of a list that a page covers. */
export interface Window {
  offset: number;
  limit: number;
}

/** The value of a namespace object's answer; its error raised; `StaleTarget` when the caller's record was old. */
export const settle = <T>(result: NamespaceResult<T>): T => {
  if ('stale' in result) throw new StaleTarget();
  return unwrap(result);
};

export const objectOf = (env: Env, target: Target) => namespaceObject(env, target.ref.id);

/** Where the caller stands on a group or project; `404 … Not Found` when they may not see it. */
export const standingOn = async (env: Env, target: Target): Promise<Standing> =>
  settle(await objectOf(env, target).standingOf(target.ref, target.actor));

/** Raises `404 … Not Found` unless the caller may see it; internal and public need no lookup. */
export const assertVisible = async (env: Env, target: Target): Promise<void> => {
  if (target.row && maySee(target.row.visibility, directStanding(target.actor.admin, 0))) return;
  await standingOn(env, target);
};

/**
 * The registry row of a target as it is now: the copy in its tree's index partition (pushed before
 * every change answers) when it is at least as new as the version the caller found, else (a push
 * still to come) the Directory's.
 */
export const describe = async (env: Env, kind: Kind, target: Target): Promise<NamespaceRow> => {
  if (target.row) return target.row;
  const copy = await locateNamespace(env, kind.name, target.id);
  if (copy && copy.namespace.version >= target.ref.snapshot.version) return copy.namespace;
  return (await directory(env).getNamespace(kind.name, target.id)) ?? raise(kind.notFound());
};

/** A new group or project in the path registry, and its own object with the creator as Owner. */
export const createNamespace = async (env: Env, input: NewNamespace): Promise<NamespaceRow> => {
  const row = unwrap(await directory(env).createNamespace(input));
  await namespaceObject(env, row.id).initialize({
    id: row.id,
    kind: input.kind,
    creatorId: row.creator_id,
    createdAt: row.created_at,
    snapshot: snapshotOf(row),
    byPath: false,
  });
  return row;
};

/** The caller's personal namespace (`/username`), made on first use. */
export const personalNamespace = async (env: Env, caller: Caller): Promise<NamespaceRow> =>
  unwrap(await directory(env).ensureUserNamespace({ username: caller.username, name: caller.name }));

/**
 * Groups or projects the user may see. What only their memberships can reach (`membership`, a
 * minimum level: the dashboard, most clients' first call) is read from the index partitions the
 * user's `User` lists, each holding whole trees with copies of their registry rows, merged by
 * id; everything else (public and internal ones too) from the Directory's registry, with the
 * user's memberships from those partitions.
 */
export const listNamespaces = async (env: Env, kind: Kind, filter: ListFilter, page: Window, userPartitions?: Promise<IndexPartitionStub[]>) => {
  const partitions = await (userPartitions ?? userIndexPartitions(env, filter.userId));
  if (listsOnlyReached(filter)) {
    const parts = await Promise.all(partitions.map((p) => p.listReached(kind.name, filter, page.offset + page.limit)));
    return {
      total: parts.reduce((sum, part) => sum + part.total, 0),
      namespaces: parts
        .flatMap((part) => part.namespaces)
        .sort((a, b) => a.id - b.id)
        .slice(page.offset, page.offset + page.limit),
    };
  }
  const levels = (await Promise.all(partitions.map((p) => p.levelsOf(filter.userId)))).flat();
  return directory(env).listNamespaces(kind.name, filter, levels, page.offset, page.limit);
};

/**
 * `PUT /groups/:id`, `PUT /projects/:id`. The Directory applies the change in one transaction
 * (paths, visibility rules) and bumps the version of every row it touched; the new copies are
 * then handed to those rows' objects (newer versions only), so the object judges by the new
 * settings from this request on. Other isolates' caches learn of it from the objects.
 */
export const updateNamespace = async (env: Env, kind: Kind, target: Target, edit: NamespaceChanges): Promise<NamespaceRow> => {
  // Requiring a second factor is a group's setting (GitLab's); a project ignores it.
  const changes = kind.name === 'group' ? edit : { ...edit, require_two_factor_authentication: undefined };
  const standing = await standingOn(env, target);
  const ownsPart = changes.path !== undefined || changes.visibility !== undefined;
  if (!mayEditSettings(kind, standing, ownsPart)) return raise(problems.forbidden());
  const { actor } = target;
  const author = { id: actor.userId, username: actor.username ?? null, name: actor.name ?? null };
  // The Directory hands the new row to the object of each group and project it changed before it answers.
  const { row, changed, events } = unwrap(await directory(env).updateNamespace(kind.name, target.id, changes, author));
  // The audit events were recorded with the change; the object's log takes them now, or, if it
  // cannot, the Directory's alarm hands them over later. The change is made either way.
  if (events.length > 0) {
    try {
      await objectOf(env, target).recordEvents(events);
      await directory(env).ackNamespaceEvents(events.map((e) => e.uuid));
    } catch (e) {
      console.warn('settings events stay with the Directory until its alarm hands them over', target.id, e);
    }
  }
  for (const c of changed) forgetRecord(c.id);
  rememberRecord(recordOf(row, target.ancestorIds));
  return row;
};

/**
 * `DELETE /groups/:id`, `DELETE /projects/:id` (Owner). The registry row goes first, in one
 * Directory transaction that refuses a group with subgroups or projects and queues the deletion;
 * then, before the Directory answers (or from its alarm), the object drops its members and
 * requests, tells its tree's index partition, and answers every later call as gone.
 */
export const deleteNamespace = async (env: Env, kind: Kind, target: Target): Promise<void> => {
  const standing = await standingOn(env, target);
  if (!mayDelete(kind, standing)) return raise(problems.forbidden());
  unwrap(await directory(env).deleteNamespace(kind.name, target.id));
  forgetRecord(target.id);
};

// ---- access requests ----

/** Pending requests; `filter` (requester, age, sort) as the console's Access requests tab reads them. */
export const listAccessRequests = async (env: Env, target: Target, page: Window, filter?: InboxFilter): Promise<PageOf<AccessRequestRow>> =>
  settle(await objectOf(env, target).listAccessRequests(target.ref, target.actor, page.offset, page.limit, filter));

/** Counted per requester (edge/rate-limits.ts) before anything else, so no one floods the owners. */
export const requestAccess = async (env: Env, target: Target, caller: Caller, ask: Omit<AccessAsk, 'email'>): Promise<RequestOutcomeRow> => {
  await enforceLimit(env, LIMITS.accessRequests, String(caller.id));
  const requester = { username: caller.username, name: caller.name };
  return settle(await objectOf(env, target).requestAccess(target.ref, target.actor, requester, { ...ask, email: caller.profile.email }));
};

/** An approval: the member, or (more approvals needed) the request with the approvals so far. */
export const approveAccessRequest = async (env: Env, target: Target, userId: number, choice: ApprovalChoice): Promise<ApprovalOutcome> =>
  settle(await objectOf(env, target).approveAccessRequest(target.ref, target.actor, userId, choice));

/** Deny (by a manager, with an optional reason) or withdraw (by the requester). */
export const removeAccessRequest = async (env: Env, target: Target, userId: number, reason: string | null = null): Promise<void> => {
  settle(await objectOf(env, target).removeAccessRequest(target.ref, target.actor, userId, reason));
};

export type EffectiveRules = { rules: StoredRules; inheritedFrom: string | null };

/** The access request rules in force on a group or project (its own, or the nearest ancestor group's). */
export const accessRequestRules = async (env: Env, target: Target): Promise<EffectiveRules> =>
  settle(await objectOf(env, target).accessRequestRules(target.ref, target.actor));

/**
 * Sets a group's or project's own rules (null: inherit). An auto-approve entry's `member_of` group
 * is found now, by its full path or id, and kept by id, so the rule holds through a rename.
 */
export const setAccessRequestRules = async (env: Env, target: Target, rules: AccessRequestRules | null): Promise<EffectiveRules> => {
  let stored: StoredRules | null = null;
  if (rules) {
    const auto = await Promise.all(
      rules.auto_approve.map(async (entry) => {
        if (entry.member_of === undefined) return entry;
        const found = await directory(env).resolveNamespace('group', entry.member_of);
        if (!found) return raise(problems.badRequest({ member_of: [`group ${entry.member_of} not found`] }));
        return { ...entry, member_of: found.namespace.full_path, member_of_id: found.namespace.id };
      }),
    );
    stored = { ...rules, auto_approve: auto };
  }
  return settle(await objectOf(env, target).setAccessRequestRules(target.ref, target.actor, stored));
};

// ---- members ----

export interface MemberOf {
  member: MemberRow;
  user: UserNames;
  createdBy: UserNames | null;
}

/**
 * Users by id as a members list shows them: the copies in the tree's index partition (kept by the
 * user fan-out for the users with rows there), and the Directory for the rest, whose answer the
 * partition keeps for its own users. So a members list asks the Directory for a user once, not
 * at every load.
 */
const usersIn = async (env: Env, target: Target, ids: number[]): Promise<Map<number, UserNames>> => {
  const wanted = [...new Set(ids)];
  const tree = treeIndex(env, target.ref.id, target.ancestorIds);
  const known = await tree.usersNamed(wanted);
  const have = new Set(known.map((u) => u.id));
  const missing = wanted.filter((id) => !have.has(id));
  const fetched = missing.length === 0 ? [] : (await directory(env).getUsers(missing)).map(({ id, username, name, state, version }) => ({ id, username, name, state, version }));
  if (fetched.length > 0) await tree.takeUsers(fetched);
  return new Map([...known, ...fetched].map((u) => [u.id, u]));
};

/** Members with their users (and who added them). */
const withUsers = async (env: Env, target: Target, members: MemberRow[]): Promise<MemberOf[]> => {
  const users = await usersIn(env, target, members.flatMap((m) => (m.created_by === null ? [m.user_id] : [m.user_id, m.created_by])));
  return members.flatMap((member) => {
    const user = users.get(member.user_id);
    return user ? [{ member, user, createdBy: member.created_by === null ? null : users.get(member.created_by) ?? null }] : [];
  });
};

const oneWithUser = async (env: Env, target: Target, member: MemberRow): Promise<MemberOf> =>
  (await withUsers(env, target, [member]))[0] ?? raise(problems.notFound('Member'));

/** The most direct members a search looks through (the object keeps no names: they are the tree's copies). */
export const MEMBERS_SEARCHED = 5_000;

/**
 * Direct members with their users (and who added them). `query` (GitLab's members API
 * parameter): only those whose username or name contains it, in any case; the object's members
 * are read whole, named from the tree's index partition, and filtered here.
 */
export const listMembers = async (env: Env, target: Target, page: Window, query?: string): Promise<PageOf<MemberOf>> => {
  if (!query) {
    const { total, items } = settle(await objectOf(env, target).listMembers(target.ref, target.actor, page.offset, page.limit));
    return { total, items: await withUsers(env, target, items) };
  }
  const { items } = settle(await objectOf(env, target).listMembers(target.ref, target.actor, 0, MEMBERS_SEARCHED));
  const q = query.toLowerCase();
  const found = (await withUsers(env, target, items)).filter(({ user }) => user.username.toLowerCase().includes(q) || user.name.toLowerCase().includes(q));
  return { total: found.length, items: found.slice(page.offset, page.offset + page.limit) };
};

/**
 * Members with those inherited from ancestor groups (the highest level each), from the index
 * partition of the tree, with their names from the Directory.
 */
export const listAllMembers = async (env: Env, target: Target, page: Window): Promise<{ total: number; members: EffectiveMember[] }> => {
  await assertVisible(env, target);
  const scope = await flushedScope(env, target);
  const { total, members } = await treeIndex(env, target.ref.id, target.ancestorIds).effectiveMembers(scope, page.offset, page.limit);
  return { total, members: await withNames(env, target, members) };
};

/** The group or project and its ancestors, once the index has every change they acknowledged (read-your-writes). */
const flushedScope = async (env: Env, target: Target): Promise<number[]> => {
  const scope = [target.ref.id, ...target.ancestorIds];
  await Promise.all(scope.map((id) => namespaceObject(env, id).flushMembershipIndex()));
  return scope;
};

/** Index rows with their users' and adders' names (a deleted user's row is left out). */
const withNames = async (env: Env, target: Target, rows: EffectiveMembership[]): Promise<EffectiveMember[]> => {
  const users = await usersIn(env, target, rows.flatMap((m) => (m.created_by === null ? [m.user_id] : [m.user_id, m.created_by])));
  return rows.flatMap((m) => {
    const user = users.get(m.user_id);
    if (!user) return [];
    const by = m.created_by === null ? undefined : users.get(m.created_by);
    return [
      {
        user_id: m.user_id,
        username: user.username,
        name: user.name,
        state: user.state,
        access_level: m.access_level,
        created_at: m.created_at,
        expires_at: m.expires_at,
        created_by: by ? { id: by.id, username: by.username, name: by.name } : null,
      },
    ];
  });
};

/** One direct member (`GET /:kind/:id/members/:user_id`). */
export const getMember = async (env: Env, target: Target, userId: number): Promise<MemberOf> =>
  oneWithUser(env, target, settle(await objectOf(env, target).getMember(target.ref, target.actor, userId)));

/** One member, direct or inherited, at their highest level (`GET /:kind/:id/members/all/:user_id`). */
export const getEffectiveMember = async (env: Env, target: Target, userId: number): Promise<EffectiveMember> => {
  await assertVisible(env, target);
  const scope = await flushedScope(env, target);
  const { members } = await treeIndex(env, target.ref.id, target.ancestorIds).effectiveMembers(scope, 0, 1, userId);
  return (await withNames(env, target, members))[0] ?? raise(problems.notFound('Member'));
};

/** `POST /:kind/:id/members`; a pending request of that user goes in the same transaction. */
export const addMember = async (env: Env, target: Target, userId: number, accessLevel: number, expiresAt: string | null): Promise<MemberOf> => {
  const user = await directory(env).getUser(userId);
  const names = user ? { username: user.username, name: user.name } : null;
  return oneWithUser(env, target, settle(await objectOf(env, target).addMember(target.ref, target.actor, userId, names, accessLevel, expiresAt)));
};

/** `PUT /:kind/:id/members/:user_id`. */
export const updateMember = async (
  env: Env,
  target: Target,
  userId: number,
  change: { accessLevel: number; expiresAt?: string | null },
): Promise<MemberOf> => oneWithUser(env, target, settle(await objectOf(env, target).updateMember(target.ref, target.actor, userId, change)));

/** `DELETE /:kind/:id/members/:user_id`. */
export const removeMember = async (env: Env, target: Target, userId: number): Promise<void> => {
  settle(await objectOf(env, target).removeMember(target.ref, target.actor, userId));
};
