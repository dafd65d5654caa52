import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Kind } from '../auth/policy';
import { directory } from '../durable/directory';
import type { Actor, NamespaceRef } from '../durable/namespace';
import type { NamespaceRow } from '../durable/namespace-registry';
import type { ApiEnv } from '../env';
import { raise } from '../errors';
import { cachedRecord, rememberRecord, type RegistryRecord } from './registry-cache';

/** The `:id` of a group or project: an integer id or a URL-encoded full path (`acme%2Fwebsite`). */
export const namespaceIdParam = () =>
  z
    .string()
    .min(1)
    .max(2048)
    .openapi({ description: 'Integer id or URL-encoded full path', example: 'acme%2Fwebsite' });

export const parseNamespaceId = (id: string | number): number | string =>
  typeof id === 'number' ? id : /^[0-9]{1,15}$/.test(id) ? Number(id) : id;

/** A group or project that exists, and what its Durable Object needs to judge the caller. */
export interface Target {
  namespace: NamespaceRow;
  /** Ancestor group ids, nearest first. */
  ancestorIds: number[];
  ref: NamespaceRef;
  actor: Actor;
}

/**
 * The finder of groups and projects (GitLab's `find_group!` / `find_project!`): resolves `:id`
 * from this isolate's registry cache or, on a miss, the Directory, which tells the caller's
 * inherited level on the way. Whether the caller may see it is decided by the namespace's own
 * object (it reads their direct membership itself, and asks about ancestor groups only when that
 * does not settle the rule), so missing and invisible look the same: `404 Group Not Found`.
 * Only ids the registry knows reach a Durable Object, so guessing ids creates none.
 */
export const findNamespace = async (c: Context<ApiEnv>, kind: Kind, id: string | number): Promise<Target> => {
  const caller = c.var.caller;
  const ref = parseNamespaceId(id);
  let record: RegistryRecord | null = cachedRecord(ref);
  let inherited: Actor['inherited'] | null = null;
  if (!record) {
    const resolved = await directory(c.env).resolveNamespace(kind.name, ref, caller.id);
    if (!resolved) return raise(kind.notFound());
    record = { namespace: resolved.namespace, ancestorIds: resolved.ancestorIds };
    rememberRecord(record);
    inherited = resolved.inherited;
  }
  const ns = record.namespace;
  if (ns.kind !== kind.name) return raise(kind.notFound());
  inherited ??= record.ancestorIds.length === 0 ? 0 : { ancestorIds: record.ancestorIds };
  return {
    namespace: ns,
    ancestorIds: record.ancestorIds,
    ref: { id: ns.id, kind: kind.name, creatorId: ns.creator_id, createdAt: ns.created_at, visibility: ns.visibility },
    actor: { userId: caller.id, admin: caller.admin, inherited },
  };
};
