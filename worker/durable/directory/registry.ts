import { clock } from '../../clock';
import type { Env } from '../../env';
import type { EventDraft, UserRef } from '../../events/event';
import { settingsEvents } from './settings-events';
import { indexPartition, type TopLocator } from '../index-partition/index-partition';
import {
  createNamespace,
  deleteNamespace,
  ensureUserNamespace,
  listNamespaces,
  namespaceById,
  registryCopies,
  resolveNamespace,
  snapshotOf,
  updateNamespace,
  type ListFilter,
  type NamespaceChanges,
  type NewNamespace,
  type RegistryCopy,
} from '../namespace-registry';
import { namespaceObject } from '../namespace/types';
import { partitionOfId, partitionOfName } from '../partitions';
import { ok } from '../result';
import { DirectoryCore } from './core';

/** Registry rows per push to the index partitions, and how long before a failed push is retried. */
const REGISTRY_PUSH_BATCH = 200;
export const REGISTRY_RETRY_MS = 10_000;

/** How long before settings events not yet in their namespace's log are handed over again. */
export const EVENT_RELAY_RETRY_MS = 10_000;

/**
 * The path registry of groups and projects (namespace-registry.ts), and what follows each change
 * of it: the registry rows copied to the index partitions of their trees, and the settings events
 * handed over to their namespaces' objects.
 */
export abstract class DirectoryRegistry extends DirectoryCore {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Registry rows still queued (a crash before their push) are pushed by the alarm.
    if (this.registryQueued()) {
      void ctx.blockConcurrencyWhile(async () => {
        if ((await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(clock.now());
      });
    }
  }

  /** The push of the registry outbox under way in this object, shared by every caller. */
  private publishing: Promise<boolean> | null = null;

  private registryQueued(): boolean {
    return this.sql.exec('SELECT 1 FROM registry_outbox LIMIT 1').toArray().length > 0;
  }

  /**
   * Pushes the registry rows queued so far (`registry_outbox`, written by triggers in the
   * transaction of every change of a row) to the index partitions of their trees, which keep
   * copies for the lists of groups and projects a user reaches, and to the objects of the groups
   * and projects changed or deleted; called before a change answers, so those show it at once. A
   * row changed meanwhile is queued again under a later number, so nothing queued is dropped
   * unpushed. False when a partition or an object could not be reached: the alarm retries.
   */
  protected async publishRegistry(): Promise<boolean> {
    const upTo = this.sql.exec<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM registry_outbox').one().seq;
    if (upTo === null) return true;
    while (this.sql.exec('SELECT 1 FROM registry_outbox WHERE seq <= ? LIMIT 1', upTo).toArray().length > 0) {
      this.publishing ??= this.pushRegistryBatch().finally(() => {
        this.publishing = null;
      });
      if (!(await this.publishing)) {
        const at = clock.now() + REGISTRY_RETRY_MS;
        const set = await this.ctx.storage.getAlarm();
        if (set === null || set > at) await this.ctx.storage.setAlarm(at);
        return false;
      }
    }
    return true;
  }

  /**
   * The oldest queued registry rows, as they are now, to their partitions, and a changed or
   * deleted group's or project's to its object; false when one failed.
   */
  private async pushRegistryBatch(): Promise<boolean> {
    const queued = this.sql
      .exec<{ seq: number; namespace_id: number; deleted_kind: 'group' | 'project' | 'user' | null }>(
        'SELECT seq, namespace_id, deleted_kind FROM registry_outbox ORDER BY seq LIMIT ?',
        REGISTRY_PUSH_BATCH,
      )
      .toArray();
    if (queued.length === 0) return true;
    // A row deleted since it was queued has nothing to copy: its object, told below, tells its partition.
    // Each row goes to its tree's partition, which is also its id's (partitions.ts `idInTreeOf`);
    // a top-level row's path, to the partition of the path's name, where the finder asks for it.
    const count = this.partitions();
    const byPartition = new Map<number, { rows: RegistryCopy[]; tops: TopLocator[] }>();
    const to = (p: number) => {
      let entry = byPartition.get(p);
      if (!entry) byPartition.set(p, (entry = { rows: [], tops: [] }));
      return entry;
    };
    const copies = registryCopies(this.sql, [...new Set(queued.map((q) => q.namespace_id))]);
    for (const row of copies) {
      to(partitionOfId(row.root_id, count)).rows.push(row);
      if (row.parent_id === null) to(partitionOfName(row.path, count)).tops.push([row.path, row.id]);
    }
    // The object keeps its own copy of the row's settings and path (`meta`), and judges by it when
    // a caller's is older; a created row (version 1) has none older, and no object for a user's.
    const changed = copies.filter((row) => row.kind !== 'user' && row.version > 1);
    // A deleted group or project: its object ends its members and requests and tells its partition.
    // A deleted personal namespace (its user's deletion) has no object: its partition, which is its
    // id's (it is its own tree's root), drops the copy.
    const deleted = new Map(queued.flatMap((q) => (q.deleted_kind === null ? [] : [[q.namespace_id, q.deleted_kind] as const])));
    try {
      await Promise.all([
        ...[...byPartition].map(([p, { rows, tops }]) => indexPartition(this.env, p).applyRegistryRows(rows, tops)),
        ...changed.map((row) => namespaceObject(this.env, row.id).applySnapshot(snapshotOf(row))),
        ...[...deleted].map(([id, kind]) =>
          kind === 'user' ? indexPartition(this.env, partitionOfId(id, count)).deleteSource(id) : namespaceObject(this.env, id).markDeleted(id, kind),
        ),
      ]);
    } catch (e) {
      console.warn('registry rows could not be copied to their index partitions or objects; the alarm will retry', e);
      return false;
    }
    this.sql.exec('DELETE FROM registry_outbox WHERE seq <= ?', queued[queued.length - 1].seq);
    return true;
  }

  async createNamespace(input: NewNamespace) {
    const created = this.ctx.storage.transactionSync(() => createNamespace(this.sql, input, this.partitions()));
    await this.publishRegistry();
    return created;
  }

  async ensureUserNamespace(user: { username: string; name: string }) {
    const found = ensureUserNamespace(this.sql, user);
    await this.publishRegistry();
    return found;
  }

  resolveNamespace(kind: 'group' | 'project', ref: number | string) {
    return resolveNamespace(this.sql, kind, ref);
  }

  listNamespaces(kind: 'group' | 'project', filter: ListFilter, levels: [number, number][], offset: number, limit: number) {
    return listNamespaces(this.sql, kind, filter, levels, offset, limit);
  }

  /** A group or project as the registry has it now (its settings and full path change). */
  getNamespace(kind: 'group' | 'project', id: number) {
    return namespaceById(this.sql, kind, id);
  }

  /**
   * Changes a group's or project's settings and, in the same transaction, records an audit event
   * per changed attribute (`events`), kept here until the namespace's object has them
   * (`ackNamespaceEvents`); the alarm hands over any the caller could not.
   */
  async updateNamespace(kind: 'group' | 'project', id: number, changes: NamespaceChanges, author: UserRef) {
    const updated = this.ctx.storage.transactionSync(() => {
      const before = namespaceById(this.sql, kind, id);
      const result = updateNamespace(this.sql, kind, id, changes);
      if (!result.ok) return result;
      const events = before ? settingsEvents(before, result.value.row, author) : [];
      for (const e of events) this.sql.exec('INSERT INTO namespace_events (uuid, namespace_id, record) VALUES (?, ?, ?)', e.uuid, id, JSON.stringify(e));
      if (events.length > 0) void this.ctx.storage.setAlarm(clock.now() + EVENT_RELAY_RETRY_MS);
      return ok({ ...result.value, events });
    });
    await this.publishRegistry();
    return updated;
  }

  /** The namespace's object has these events now. */
  ackNamespaceEvents(uuids: string[]): void {
    this.sql.exec('DELETE FROM namespace_events WHERE uuid IN (SELECT value FROM json_each(?))', JSON.stringify(uuids));
  }

  /** Hands settings events over to their namespaces' objects when the caller could not; true while some are left. */
  protected async relayNamespaceEvents(): Promise<boolean> {
    const rows = this.sql.exec<{ namespace_id: number; record: string }>('SELECT namespace_id, record FROM namespace_events ORDER BY rowid LIMIT 500').toArray();
    const byNamespace = new Map<number, EventDraft[]>();
    for (const r of rows) byNamespace.set(r.namespace_id, [...(byNamespace.get(r.namespace_id) ?? []), JSON.parse(r.record) as EventDraft]);
    for (const [namespaceId, records] of byNamespace) {
      try {
        await this.env.NAMESPACES.getByName(String(namespaceId)).recordEvents(records);
        this.ackNamespaceEvents(records.map((e) => e.uuid));
      } catch (e) {
        console.warn('settings events could not be handed to their namespace; the alarm will retry', namespaceId, e);
      }
    }
    return this.sql.exec('SELECT 1 FROM namespace_events LIMIT 1').toArray().length > 0;
  }

  /** Deletes a group's or project's row; its object, told before this answers, ends its members and requests. */
  async deleteNamespace(kind: 'group' | 'project', id: number) {
    const deleted = this.ctx.storage.transactionSync(() => deleteNamespace(this.sql, kind, id));
    if (deleted.ok) await this.publishRegistry();
    return deleted;
  }
}
