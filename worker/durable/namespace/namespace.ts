import { ok } from '../result';
import type { EventDraft, EventRecord } from '../../events/event';
import type { NamespaceKind } from '../../../shared/access-levels';
import type { NamespaceSnapshot } from '../namespace-registry';
import { requesterRef } from './core';
import { NamespaceHooks } from './hooks';
import type { GroupMembership, NamespaceRef, Requester } from './types';

/**
 * One group or project: its members and access requests, in SQLite, with its audit events and
 * webhooks. The class is built in layers, one file each: core.ts (its state and tables),
 * replication.ts (the alarm's work), checks.ts (before each rule), access.ts (the access request
 * and member rules), hooks.ts (audit events and webhooks); here, what other objects call: its
 * creation, events copied up to it, settings, deletion, and the user fan-out's entry points.
 * The Worker reaches it by `namespaceObject` (types.ts).
 */
export class Namespace extends NamespaceHooks {
  /** Creates the object's state for a new group or project: its creator as Owner. */
  async initialize(ref: NamespaceRef): Promise<void> {
    await this.ready(ref, true);
  }

  /**
   * A user's direct level here (0 for none) and this group's name, members whose expiry date has
   * come removed first: what a project or subgroup below asks of each ancestor group for a
   * membership inherited from it.
   */
  async directMembershipOf(userId: number): Promise<GroupMembership> {
    if (!this.load()) return { level: 0, group: '' };
    const settings = (this.settings ??= this.readSettings());
    if (settings.deleted) return { level: 0, group: settings.name };
    this.expireDue();
    return { level: this.directLevel(userId), group: settings.name, rules: this.ownRules(), fullPath: settings.fullPath };
  }

  /** Events of a subgroup or project below this group, copied up by its alarm (idempotent). */
  async receiveEvents(records: EventRecord[]): Promise<void> {
    this.load();
    this.ctx.storage.transactionSync(() => {
      for (const r of records) {
        const seq = this.log.append(r, false);
        if (seq !== null) this.hooks.enqueue(seq, r);
      }
    });
    this.scheduleAlarm();
  }

  /**
   * Events of this group or project recorded elsewhere: a settings change is recorded by the
   * Directory in the transaction that makes it, and handed over here (idempotent by uuid).
   */
  async recordEvents(records: EventDraft[]): Promise<void> {
    if (!this.load()) return;
    this.mutate(() => {
      for (const r of records) this.append(r);
      return ok(null);
    });
  }

  /**
   * Takes a newer copy of the registry row (after `PUT /groups/:id`, or a rename of an ancestor).
   * Older versions are ignored, so of two settings changes the later one wins in every object.
   */
  async applySnapshot(snapshot: NamespaceSnapshot): Promise<void> {
    if (!this.load()) return;
    this.takeSnapshot(snapshot);
    await this.push();
  }

  /**
   * The group or project was deleted from the registry: its members, requests and outbox go, its
   * tree's index partition drops its rows (`pushDeletion`), and every later call is told `Stale`,
   * so the caller looks it up again and finds nothing.
   */
  async markDeleted(id: number, kind: NamespaceKind): Promise<void> {
    // An object never set up (a crash between its row's creation and its first call) records the
    // deletion too, so that a caller still holding the row cannot set it up afterwards.
    if (!this.load()) {
      this.sql.exec('INSERT INTO meta (singleton, namespace_id, kind) VALUES (1, ?, ?)', id, kind);
      this.load();
    }
    this.ctx.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM members');
      this.sql.exec('DELETE FROM access_requests');
      this.sql.exec('DELETE FROM outbox');
      this.hooks.removeAll();
      this.sql.exec('UPDATE meta SET deleted = 1');
    });
    this.settings = null;
    this.nextExpiry = null;
    // Its events recorded before the deletion are still copied up by the alarm (`afterDeletion`).
    const forward = this.forwardDue();
    await (forward === null ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(forward));
    await this.pushDeletion();
  }

  /** A user's pending request here disappears (they were blocked, deactivated or deleted); false when there was none. */
  async removePendingRequestOf(userId: number): Promise<boolean> {
    if (!this.load()) return false;
    const removed = this.mutate(() => {
      const gone = this.pendingRequest(userId);
      if (!gone) return ok(false);
      this.closeRequest(userId, { outcome: 'removed' });
      this.record({ action: 'discarded', author: null, user: requesterRef(gone), since: gone.requested_at });
      return ok(true);
    });
    await this.push();
    return removed.ok && removed.value;
  }

  /**
   * A deleted user's membership and pending request here disappear, in one transaction. No
   * last-Owner rule: the Directory refused to delete a group's only Owner.
   */
  async removeDeletedUser(userId: number): Promise<void> {
    if (!this.load()) return;
    this.mutate(() => {
      this.forget([userId], [userId]);
      return ok(null);
    });
    await this.push();
  }

  /** The names stored with a user's pending request follow a rename (`version`: of the users row; older never wins). */
  async renameRequester(userId: number, names: Requester, version: number): Promise<void> {
    if (!this.load()) return;
    this.rename([{ userId, ...names, version }]);
  }

  /**
   * Delivers any member change still waiting in the outbox (after a crash, say) before a caller
   * reads the index partition, so what the index says includes every acknowledged change.
   * Returns whether nothing is left waiting.
   */
  async flushMembershipIndex(): Promise<boolean> {
    if (!this.load()) return true;
    this.expireDue();
    if (this.outboxSize() > 0) await this.push();
    return this.outboxSize() === 0;
  }
}
