import { DEVELOPER } from '../../../shared/access-levels';
import { auditEventReach, KINDS, mayManageEvents, type Kind, type Standing } from '../../auth/policy';
import { problems } from '../../errors';
import { newEvent, redactedUrl, type HookTrigger } from '../../events/event';
import { hookPayload } from '../../events/payload';
import type { AuditFilter, LoggedEvent } from '../event-log';
import { fail, ok, type Result } from '../result';
import { NamespaceAccess } from './access';
import { actorRef } from './core';
import type { Actor, NamespaceRef, NamespaceResult, PageOf, Stale } from './types';
import { MAX_HOOKS, type HookLogRow, type HookRow, type HookSettings, type StatusFilter } from './webhooks';

/** Who may read a group's or project's audit events and manage its webhooks. */
const managesEvents = (kind: Kind) => (s: Standing) => mayManageEvents(kind, s);

/**
 * A group's or project's audit events (GitLab's audit events API) and its webhooks (GitLab's
 * group and project hooks API), the rows of which webhooks.ts keeps.
 */
export abstract class NamespaceHooks extends NamespaceAccess {
  /**
   * Which of its audit events the caller may read (`auditEventReach`): all of them (an empty
   * filter) or their own, or 403 when none.
   */
  private async readableEvents(ref: NamespaceRef, actor: Actor): Promise<Result<Pick<AuditFilter, 'authorId'>> | Stale> {
    const kind = KINDS[ref.kind];
    const standing = await this.permitted(ref, actor, (s) => auditEventReach(kind, s) !== 'none', (s) => auditEventReach(kind, s) === 'all');
    if (!standing.ok) return standing;
    return ok(auditEventReach(kind, standing.value) === 'own' ? { authorId: actor.userId } : {});
  }

  /** Its audit events and those of everything below it, newest first (GitLab's audit events API). */
  async listAuditEvents(ref: NamespaceRef, actor: Actor, filter: AuditFilter, offset: number, limit: number): Promise<NamespaceResult<PageOf<LoggedEvent>>> {
    const reach = await this.readableEvents(ref, actor);
    if (!reach.ok) return reach;
    const page = this.log.list({ ...filter, ...reach.value }, offset, limit);
    return ok({ total: page.total, items: await this.log.withNames(page.items, this.lookup) });
  }

  /** One audit event of this log (`GET /:kind/:id/audit_events/:audit_event_id`), within what the caller may read. */
  async getAuditEvent(ref: NamespaceRef, actor: Actor, id: number): Promise<NamespaceResult<LoggedEvent>> {
    const reach = await this.readableEvents(ref, actor);
    if (!reach.ok) return reach;
    const found = this.log.find(id, reach.value);
    if (!found) return fail(problems.notFound());
    const [named] = await this.log.withNames([found], this.lookup);
    return ok(named ?? found);
  }

  async listHooks(ref: NamespaceRef, actor: Actor, offset: number, limit: number): Promise<NamespaceResult<PageOf<HookRow>>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    return ok(this.hooks.list(offset, limit));
  }

  async getHook(ref: NamespaceRef, actor: Actor, hookId: number): Promise<NamespaceResult<HookRow>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    return hook ? ok(hook) : fail(problems.notFound('Hook'));
  }

  /** A new hook; its signing secret is returned this once and kept only sealed. */
  async createHook(ref: NamespaceRef, actor: Actor, settings: HookSettings, instanceUrl: string): Promise<NamespaceResult<{ hook: HookRow; signingSecret: string }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const { uuid, signingSecret } = this.hooks.newSecrets();
    const sealed = await this.hooks.sealed(uuid, settings.token, signingSecret);
    return this.mutate(() => {
      if (this.hooks.count() >= MAX_HOOKS) return fail(problems.badRequest({ base: [`Maximum number of ${ref.kind} hooks (${MAX_HOOKS}) exceeded`] }));
      const hook = this.hooks.insert(uuid, settings, sealed, instanceUrl);
      this.record({ action: 'hook_created', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok({ hook, signingSecret });
    });
  }

  /**
   * Changes a hook (GitLab's `PUT …/hooks/:hook_id`): the fields given; a new URL without a new
   * token drops the old token, as in GitLab. Editing enables a disabled hook again.
   */
  async updateHook(ref: NamespaceRef, actor: Actor, hookId: number, change: Partial<HookSettings>): Promise<NamespaceResult<HookRow>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const before = this.hooks.get(hookId);
    if (!before) return fail(problems.notFound('Hook'));
    // Only a new token is sealed before the transaction; every other field, and whether the token
    // stays, is decided in it from the hook as it is then (another edit may have run meanwhile).
    const newToken = change.token === undefined ? undefined : await this.hooks.sealToken(before.uuid, change.token);
    return this.mutate(() => {
      const current = this.hooks.get(hookId);
      if (!current || current.uuid !== before.uuid) return fail(problems.notFound('Hook'));
      const url = change.url ?? current.url;
      const sealedToken = newToken !== undefined ? newToken : url === current.url ? current.token : null;
      const settings: Omit<HookSettings, 'token'> = {
        url,
        name: change.name ?? current.name,
        description: change.description ?? current.description,
        member_events: change.member_events ?? current.member_events,
        access_request_events: change.access_request_events ?? current.access_request_events,
        enable_ssl_verification: change.enable_ssl_verification ?? current.enable_ssl_verification,
      };
      const hook = this.hooks.update(hookId, settings, sealedToken);
      this.record({ action: 'hook_updated', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok(hook);
    });
  }

  /** Deletes a hook with its queued deliveries and its log. */
  async deleteHook(ref: NamespaceRef, actor: Actor, hookId: number): Promise<NamespaceResult<null>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    return this.mutate(() => {
      const hook = this.hooks.get(hookId);
      if (!hook) return fail(problems.notFound('Hook'));
      this.hooks.remove(hookId);
      this.record({ action: 'hook_deleted', author: actorRef(actor), hook: { id: hook.id, url: redactedUrl(hook.url) } });
      return ok(null);
    });
  }

  /** A hook's delivery attempts of the last seven days, newest first. */
  async listHookEvents(
    ref: NamespaceRef,
    actor: Actor,
    hookId: number,
    status: StatusFilter | undefined,
    offset: number,
    limit: number,
  ): Promise<NamespaceResult<PageOf<HookLogRow>>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    if (!this.hooks.get(hookId)) return fail(problems.notFound('Hook'));
    return ok(this.hooks.logs(hookId, status, offset, limit));
  }

  /** Sends a logged delivery again, now: the same body, `webhook-id` and `Idempotency-Key`. */
  async resendHookEvent(ref: NamespaceRef, actor: Actor, hookId: number, logId: number): Promise<NamespaceResult<{ status: number | null }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    if (!hook) return fail(problems.notFound('Hook'));
    const entry = this.hooks.log(hookId, logId);
    if (!entry) return fail(problems.notFound());
    const result = await this.hooks.send(hook, { id: entry.event_uuid, body: entry.request_body }, entry.trigger);
    this.scheduleAlarm();
    return ok({ status: result.status });
  }

  /**
   * Sends a sample event to a hook now (GitLab's `POST …/hooks/:hook_id/test/:trigger`): the
   * caller added as a Developer, or asking for access; `"test": true` marks it.
   */
  async testHook(ref: NamespaceRef, actor: Actor, hookId: number, trigger: HookTrigger): Promise<NamespaceResult<{ ok: boolean; status: number | null; error: string | null }>> {
    const here = await this.permitted(ref, actor, managesEvents(KINDS[ref.kind]));
    if (!here.ok) return here;
    const hook = this.hooks.get(hookId);
    if (!hook) return fail(problems.notFound('Hook'));
    const caller = actorRef(actor);
    const sample = newEvent(
      this.entity(),
      trigger === 'member_events' ? { action: 'added', author: caller, user: caller, access_level: DEVELOPER } : { action: 'requested', author: caller, user: caller },
    );
    const body = JSON.stringify({ ...hookPayload(sample), test: true });
    const result = await this.hooks.send(hook, { id: sample.uuid, body }, trigger === 'member_events' ? 'member_hooks' : 'access_request_hooks');
    this.scheduleAlarm();
    return ok({ ok: result.ok, status: result.status, error: result.error });
  }
}
