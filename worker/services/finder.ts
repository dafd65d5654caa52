import { z } from '@hono/zod-openapi';
import type { Kind } from '../auth/policy';
import { directory } from '../durable/directory/directory';
import { locateNamespace } from '../durable/index-partition/index-partition';
import type { Actor, NamespaceRef } from '../durable/namespace/types';
import { snapshotOf, type NamespaceRow } from '../durable/namespace-registry';
import type { Caller, Env } from '../env';
import { raise } from '../errors';
import { cachedRecord, forgetPath, forgetRecord, rememberRecord, type RegistryRecord } from './registry-cache';

/** The `:id` of a group or project: an integer id or a URL-encoded full path (`acme%2Fwebsite`). */
export const namespaceIdParam = () =>
  z
    .string()
    .min(1)
    .max(2048)
    .openapi({ description: 'Integer id or URL-encoded full path', example: 'acme%2Fwebsite' });

export const parseNamespaceId = (id: string | number): number | string =>
  typeof id === 'number' ? id : /^[0-9]{1,15}$/.test(id) ? Number(id) : id;

/**
 * What the finder reads from a request: the bindings and who is asking. An API handler's context
 * is one (`c.var.caller` from the token); so is an HTML page's (the browser session's user).
 */
interface FinderContext {
  env: Env;
  var: { caller: Pick<Caller, 'id' | 'admin' | 'username' | 'name'> };
}

/** A group or project that exists, and what its Durable Object needs to judge the caller. */
export interface Target {
  id: number;
  /** Ancestor group ids, nearest first. */
  ancestorIds: number[];
  ref: NamespaceRef;
  actor: Actor;
  /** The registry row, when this lookup read it from the Directory (else see `describe`). */
  row: NamespaceRow | null;
}

/**
 * Thrown by the service when the namespace's object says the target was found through an
 * out-of-date cache entry (renamed or deleted since); `withNamespace` looks it up again.
 */
export class StaleTarget extends Error {
  constructor() {
    super('stale registry record');
  }
}

export const recordOf = (row: NamespaceRow, ancestorIds: number[]): RegistryRecord => ({
  id: row.id,
  kind: row.kind === 'group' ? 'group' : 'project',
  creatorId: row.creator_id,
  createdAt: row.created_at,
  ancestorIds,
  snapshot: snapshotOf(row),
});

/**
 * The finder of groups and projects (GitLab's `find_group!` / `find_project!`): resolves `:id`
 * from this isolate's registry cache or, on a miss, the copies in the index partitions
 * (`locateNamespace`: by id the id's partition, which is its tree's; by path the top-level path's
 * partition, then the tree's), and when they do not know it (or when `fresh`, after an object
 * said a copy was old) the Directory. Whether the caller may see it is decided by the
 * namespace's own object (it reads their direct membership itself, and asks about ancestor
 * groups only when that does not settle the rule), so missing and invisible look the same:
 * `404 Group Not Found`. Only ids the registry knows reach a Durable Object, so guessing ids
 * creates none.
 */
const findNamespace = async (c: FinderContext, kind: Kind, id: string | number, fresh = false): Promise<Target> => {
  const caller = c.var.caller;
  const ref = parseNamespaceId(id);
  let record: RegistryRecord | null = fresh ? null : cachedRecord(ref);
  let row: NamespaceRow | null = null;
  if (!record && !fresh) {
    // The index partitions' copies, kept by the registry before each change answers; like this
    // isolate's cache, only a hint about the mutable part, which the object checks.
    const located = await locateNamespace(c.env, kind.name, ref);
    if (located) {
      record = recordOf(located.namespace, located.ancestorIds);
      rememberRecord(record);
    }
  }
  if (!record) {
    const resolved = await directory(c.env).resolveNamespace(kind.name, ref);
    if (!resolved) return raise(kind.notFound());
    row = resolved.namespace;
    record = recordOf(row, resolved.ancestorIds);
    rememberRecord(record);
  }
  if (record.kind !== kind.name) return raise(kind.notFound());
  const inherited: Actor['inherited'] = record.ancestorIds.length === 0 ? 0 : { ancestorIds: record.ancestorIds };
  return {
    id: record.id,
    ancestorIds: record.ancestorIds,
    ref: {
      id: record.id,
      kind: kind.name,
      creatorId: record.creatorId,
      createdAt: record.createdAt,
      snapshot: record.snapshot,
      byPath: row === null && typeof ref === 'string',
      ancestorIds: record.ancestorIds,
    },
    actor: { userId: caller.id, admin: caller.admin, inherited, username: caller.username, name: caller.name },
    row,
  };
};

/**
 * Finds `:id` and runs `op` on it. When the namespace's object says the cached record was out
 * of date (`StaleTarget`), the record is forgotten and `:id` looked up again in the Directory: a
 * renamed group's old path answers 404 at once, in every isolate, and its new path is found.
 */
export const withNamespace = async <T>(c: FinderContext, kind: Kind, id: string | number, op: (target: Target) => Promise<T>): Promise<T> => {
  const target = await findNamespace(c, kind, id);
  try {
    return await op(target);
  } catch (e) {
    if (!(e instanceof StaleTarget)) throw e;
    forgetRecord(target.id);
    if (target.ref.byPath) forgetPath(target.ref.snapshot.full_path);
    if (target.row) return raise(kind.notFound());
  }
  const fresh = await findNamespace(c, kind, id, true);
  try {
    return await op(fresh);
  } catch (e) {
    if (e instanceof StaleTarget) {
      forgetRecord(fresh.id);
      return raise(kind.notFound());
    }
    throw e;
  }
};
