import { config } from '../config';
import { getInstanceEvent, listInstanceEvents } from '../durable/audit-log/audit-log';
import type { AuditFilter, LoggedEvent } from '../durable/event-log';
import type { PageOf } from '../durable/namespace/types';
import type { HookLogRow, HookRow, HookSettings, StatusFilter } from '../durable/namespace/webhooks';
import type { Caller, Env } from '../env';
import { enforceLimit, LIMITS } from '../edge/rate-limits';
import { problems, raise } from '../errors';
import type { HookTrigger } from '../events/event';
import { checkDestination } from '../events/url-guard';
import type { Target } from './finder';
import { objectOf, settle, type Window } from './namespaces';

/**
 * Audit events and webhooks of groups and projects (GitLab's audit events and hooks APIs): who
 * may is judged by the group's or project's object (Owner on groups, Maintainer on projects),
 * which also keeps the log, the hooks and their deliveries.
 */

/** A group's or project's audit events, with those of everything below it. */
export const listAuditEvents = async (env: Env, target: Target, filter: AuditFilter, page: Window): Promise<PageOf<LoggedEvent>> =>
  settle(await objectOf(env, target).listAuditEvents(target.ref, target.actor, filter, page.offset, page.limit));

/** One of a group's or project's audit events; GitLab's plain 404 when this log has none by that id. */
export const getAuditEvent = async (env: Env, target: Target, id: number): Promise<LoggedEvent> =>
  settle(await objectOf(env, target).getAuditEvent(target.ref, target.actor, id));

/** One instance audit event (`GET /audit_events/:id`): administrators only. */
export const getInstanceAuditEvent = async (env: Env, caller: Caller, id: number): Promise<LoggedEvent> => {
  if (!caller.admin) return raise(problems.forbidden());
  return (await getInstanceEvent(env, id)) ?? raise(problems.notFound());
};

/** Every group's and project's audit events (`GET /audit_events`): administrators only. */
export const listInstanceAuditEvents = async (env: Env, caller: Caller, filter: AuditFilter, page: Window): Promise<PageOf<LoggedEvent>> => {
  if (!caller.admin) return raise(problems.forbidden());
  return listInstanceEvents(env, filter, page.offset, page.limit);
};

/** GitLab's refusal of a hook URL that leads somewhere it may not (400, "Url is blocked: …"). */
const assertAllowedUrl = async (env: Env, url: string): Promise<void> => {
  const reason = await checkDestination(url, config(env));
  if (reason) raise(problems.badRequest(`Url is blocked: ${reason}`));
};

export const listHooks = async (env: Env, target: Target, page: Window): Promise<PageOf<HookRow>> =>
  settle(await objectOf(env, target).listHooks(target.ref, target.actor, page.offset, page.limit));

export const getHook = async (env: Env, target: Target, hookId: number): Promise<HookRow> =>
  settle(await objectOf(env, target).getHook(target.ref, target.actor, hookId));

/** A new hook and its signing secret (shown this once); `instanceUrl` is sent as `X-Gitlab-Instance`. */
export const createHook = async (env: Env, target: Target, settings: HookSettings, instanceUrl: string) => {
  await assertAllowedUrl(env, settings.url);
  return settle(await objectOf(env, target).createHook(target.ref, target.actor, settings, instanceUrl));
};

export const updateHook = async (env: Env, target: Target, hookId: number, change: Partial<HookSettings>): Promise<HookRow> => {
  if (change.url !== undefined) await assertAllowedUrl(env, change.url);
  return settle(await objectOf(env, target).updateHook(target.ref, target.actor, hookId, change));
};

export const deleteHook = async (env: Env, target: Target, hookId: number): Promise<void> => {
  settle(await objectOf(env, target).deleteHook(target.ref, target.actor, hookId));
};

export const listHookEvents = async (env: Env, target: Target, hookId: number, status: StatusFilter | undefined, page: Window): Promise<PageOf<HookLogRow>> =>
  settle(await objectOf(env, target).listHookEvents(target.ref, target.actor, hookId, status, page.offset, page.limit));

/** Sends a logged delivery again now; the status of the answer, or null when none came. */
export const resendHookEvent = async (env: Env, target: Target, hookId: number, logId: number): Promise<number | null> =>
  settle(await objectOf(env, target).resendHookEvent(target.ref, target.actor, hookId, logId)).status;

/**
 * Sends a sample event now; a failure is GitLab's 422 with what went wrong. Each test sends a
 * request from Knock, so they are counted per hook (edge/rate-limits.ts), and only for those who
 * may test it: a stranger cannot use up a hook's tests.
 */
export const testHook = async (env: Env, target: Target, hookId: number, trigger: HookTrigger): Promise<void> => {
  await getHook(env, target, hookId);
  await enforceLimit(env, LIMITS.hookTests, `${target.ref.kind}:${target.id}:${hookId}`);
  const result = settle(await objectOf(env, target).testHook(target.ref, target.actor, hookId, trigger));
  if (!result.ok) raise(problems.unprocessable(`Hook execution failed: ${result.error ?? `HTTP ${result.status}`}`));
};
