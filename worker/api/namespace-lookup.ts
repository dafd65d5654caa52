import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import { maySee, type Kind, type Standing } from '../auth/policy';
import { directory } from '../durable/directory';
import type { Actor, NamespaceRef } from '../durable/namespace';
import type { NamespaceRow, ResolvedNamespace } from '../durable/namespace-registry';
import type { AppEnv, Caller } from '../env';
import { raise } from '../errors';
import { cachedRecord, rememberRecord, type RegistryRecord } from './registry-cache';

/** The `:id` of a group or project: an integer id or a URL-encoded full path (`acme%2Fwebsite`). */
export const namespaceIdParam = () =>
  z
    .string()
    .min(1)
    .max(2048)
    .openapi({ description: 'Integer id or URL-encoded full path', example: 'acme%2Fwebsite' });

export const parseNamespaceId = (id: string): number | string => (/^[0-9]{1,15}$/.test(id) ? Number(id) : id);

/** A group or project the caller may see, with where the caller stands on it. */
export interface Found {
  namespace: NamespaceRow;
  ancestorIds: number[];
  standing: Standing;
  /** What the namespace's Durable Object needs to know about it and about the caller. */
  ref: NamespaceRef;
  actor: Actor;
}

/** The resolved group or project as `caller` sees it, or null when it is hidden from them. */
export const asSeenBy = (caller: Caller, kind: Kind, resolved: ResolvedNamespace | null): Found | null => {
  if (!resolved) return null;
  const standing: Standing = { admin: caller.admin, direct: resolved.direct, inherited: resolved.inherited };
  if (!maySee(resolved.namespace.visibility, standing)) return null;
  const ns = resolved.namespace;
  return {
    namespace: ns,
    ancestorIds: resolved.ancestorIds,
    standing,
    ref: { id: ns.id, kind: kind.name, creatorId: ns.creator_id, createdAt: ns.created_at },
    actor: { userId: caller.id, admin: caller.admin, inherited: resolved.inherited },
  };
};

/**
 * The finder: resolves `:id` and answers "may the caller see it". Missing and invisible look the
 * same (`404 Group Not Found` / `404 Project Not Found`), so private names do not leak.
 */
export const findVisible = async (c: Context<AppEnv>, kind: Kind, id: string | number): Promise<Found> => {
  const ref = typeof id === 'number' ? id : parseNamespaceId(id);
  const found = asSeenBy(c.var.caller, kind, await directory(c.env).resolveNamespace(kind.name, ref, c.var.caller.id));
  return found ?? raise(kind.notFound());
};

/** A group or project that exists, and what its Durable Object needs to judge the caller. */
export interface Target {
  namespace: NamespaceRow;
  ref: NamespaceRef;
  actor: Actor;
}

/**
 * The finder of the access-request routes: resolves `:id` from this isolate's registry cache or,
 * on a miss, the Directory (which tells the caller's inherited level on the way). Whether the
 * caller may see it is left to the namespace's own object, which reads their direct membership
 * itself and asks the Directory about ancestor groups only when that does not settle the rule;
 * missing and invisible still look the same (404). Only ids the registry knows reach a Durable
 * Object, so guessing ids creates none.
 */
export const findNamespace = async (c: Context<AppEnv>, kind: Kind, id: string): Promise<Target> => {
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
    ref: { id: ns.id, kind: kind.name, creatorId: ns.creator_id, createdAt: ns.created_at, visibility: ns.visibility },
    actor: { userId: caller.id, admin: caller.admin, inherited },
  };
};
