import { createRoute, z } from '@hono/zod-openapi';
import type { GroupHook, ProjectHook } from '../../shared/api-types';
import type { Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import type { HookRow, HookSettings, StatusFilter } from '../durable/namespace/webhooks';
import * as service from '../services/events';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import {
  GroupHookSchema,
  HookEventSchema,
  NewGroupHookSchema,
  NewProjectHookSchema,
  presentGroupHook,
  presentHookEvent,
  presentProjectHook,
  ProjectHookSchema,
} from './presenters/hook';
import { HookResendSchema } from '../../shared/schemas';
import { createApiRouter } from './router';
import { raises } from './error-answers';

/** What differs between group and project hooks: the entity's schema (`group_id` or `project_id`). */
interface HookApi {
  schema: typeof GroupHookSchema | typeof ProjectHookSchema;
  newSchema: typeof NewGroupHookSchema | typeof NewProjectHookSchema;
  present: (namespaceId: number, h: HookRow) => GroupHook | ProjectHook;
}

const HOOK_APIS: Record<Kind['name'], HookApi> = {
  group: { schema: GroupHookSchema, newSchema: NewGroupHookSchema, present: presentGroupHook },
  project: { schema: ProjectHookSchema, newSchema: NewProjectHookSchema, present: presentProjectHook },
};

const urlParam = () => z.string().min(1).max(2048).refine((v) => URL.canParse(v), { message: 'is invalid' });

/**
 * What can travel as the `X-Gitlab-Token` header unchanged: visible ASCII, with spaces and tabs
 * inside (RFC 9110 §5.5 field values; GitLab refuses a line break). No CR, LF, NUL or other
 * control, nothing outside ASCII, and no space at either end, which a header loses.
 */
const HEADER_SAFE = /^(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)?$/;

/** GitLab's hook parameters that Knock has; GitLab's other event switches are accepted and ignored. */
const hookFields = {
  url: urlParam(),
  name: z.string().max(255).optional(),
  description: z.string().max(2048).optional(),
  token: z
    .string()
    .max(255)
    .regex(HEADER_SAFE)
    .optional()
    .openapi({ description: 'Secret token sent as X-Gitlab-Token (visible ASCII, inner spaces); never shown again' }),
  member_events: boolParam().optional().openapi({ description: 'Members added, changed, removed or expired (default true)' }),
  access_request_events: boolParam().optional().openapi({ description: 'Access requests made, withdrawn or denied (default true)' }),
  enable_ssl_verification: boolParam().optional(),
};

/** A new hook's fields, as the API and the console's form take them. */
export const NewHookFields = z.object(hookFields);
/** A hook's changes: every field optional. */
export const HookChangeFields = z.object({ ...hookFields, url: urlParam().optional() });

/** A new hook's settings from its fields, with GitLab's defaults (every event, SSL verified). */
export const newHookSettings = (body: z.output<typeof NewHookFields>): HookSettings => ({
  url: body.url,
  name: body.name ?? '',
  description: body.description ?? '',
  token: body.token || null,
  member_events: body.member_events ?? true,
  access_request_events: body.access_request_events ?? true,
  enable_ssl_verification: body.enable_ssl_verification ?? true,
});

/** What an edit changes: an absent field stays; an empty token removes it. */
export const hookChange = (body: z.output<typeof HookChangeFields>): Partial<HookSettings> => ({
  url: body.url,
  name: body.name,
  description: body.description,
  token: body.token === undefined ? undefined : body.token || null,
  member_events: body.member_events,
  access_request_events: body.access_request_events,
  enable_ssl_verification: body.enable_ssl_verification,
});

/** The statuses GitLab's hook events list filters by: a code, or a class of codes. */
const statusParam = () =>
  z
    .union([z.enum(['successful', 'client_failure', 'server_failure']), z.coerce.number().int().min(100).max(599)])
    .optional()
    .openapi({ description: 'A response status (200), or successful, client_failure, server_failure' });

const triggerParam = () => z.enum(['member_events', 'access_request_events']);

/**
 * GitLab's group and project webhooks API, written once for both kinds: the hooks, their
 * delivery log (`events`, seven days), resending a logged delivery and sending a test. Owner on
 * groups, Maintainer on projects; deliveries themselves go from the object's alarm.
 */
export const hookRoutes = (kind: Kind) => {
  const api = HOOK_APIS[kind.name];
  const tags = [`${kind.label} webhooks`];
  const idParam = z.object({ id: namespaceIdParam() });
  const hookParams = z.object({ id: namespaceIdParam(), hook_id: intParam() });
  const NewHook = NewHookFields.openapi(`New${kind.label}Hook`);
  const HookChanges = HookChangeFields.openapi(`${kind.label}HookChanges`);
  const one = { 'application/json': { schema: api.schema } };

  const list = createRoute({
    method: 'get',
    path: '/{id}/hooks',
    tags,
    summary: `Webhooks of a ${kind.name}`,
    request: { params: idParam, query: z.object(paginationQuery) },
    responses: { 200: { description: 'Hooks', content: { 'application/json': { schema: z.array(api.schema) } } } },
  });
  const create = createRoute({
    method: 'post',
    path: '/{id}/hooks',
    tags,
    summary: `Add a webhook to a ${kind.name}; the answer shows its signing_token (whsec_…) this once`,
    request: { params: idParam, body: bodyContent(NewHook) },
    responses: { 201: { description: 'The hook and its signing secret', content: { 'application/json': { schema: api.newSchema } } } },
  });
  const get = createRoute({
    method: 'get',
    path: '/{id}/hooks/{hook_id}',
    tags,
    summary: `A webhook of a ${kind.name}`,
    request: { params: hookParams },
    responses: { 200: { description: 'The hook', content: one } },
  });
  const edit = createRoute({
    method: 'put',
    path: '/{id}/hooks/{hook_id}',
    tags,
    summary: 'Change a webhook (a new url without a token drops the token); editing enables a disabled hook again',
    request: { params: hookParams, body: bodyContent(HookChanges) },
    responses: { 200: { description: 'The hook', content: one } },
  });
  const remove = createRoute({
    method: 'delete',
    path: '/{id}/hooks/{hook_id}',
    tags,
    summary: 'Delete a webhook, its queued deliveries and its log',
    request: { params: hookParams },
    responses: { 204: { description: 'Deleted' } },
  });
  const events = createRoute({
    method: 'get',
    path: '/{id}/hooks/{hook_id}/events',
    tags,
    summary: "A webhook's delivery attempts of the last seven days, newest first",
    request: { params: hookParams, query: z.object({ status: statusParam(), ...paginationQuery }) },
    responses: { 200: { description: 'Delivery attempts', content: { 'application/json': { schema: z.array(HookEventSchema) } } } },
  });
  const resend = createRoute({
    method: 'post',
    path: '/{id}/hooks/{hook_id}/events/{hook_event_id}/resend',
    tags,
    summary: 'Send a logged delivery again now, with the same webhook-id and Idempotency-Key',
    request: { params: hookParams.extend({ hook_event_id: intParam() }) },
    responses: { 201: { description: 'The new attempt’s status', content: { 'application/json': { schema: HookResendSchema } } } },
  });
  const testResponses = {
    201: { description: 'Delivered (a 2xx answer)', content: { 'application/json': { schema: z.object({ message: z.string() }) } } },
    ...raises(422),
  };
  const test = createRoute({
    method: 'post',
    path: '/{id}/hooks/{hook_id}/test',
    tags,
    summary: 'Send a sample member event to a webhook now (422 when it fails)',
    request: { params: hookParams },
    responses: testResponses,
  });
  const testTrigger = createRoute({
    method: 'post',
    path: '/{id}/hooks/{hook_id}/test/{trigger}',
    tags,
    summary: 'Send a sample member_events or access_request_events event to a webhook now (422 when it fails)',
    request: { params: hookParams.extend({ trigger: triggerParam() }) },
    responses: testResponses,
  });

  return createApiRouter()
    .openapi(list, async (c) => {
      const page = pageOf(c.req.valid('query'));
      const { items, total, id } = await withNamespace(c, kind, c.req.valid('param').id, async (target) => ({
        ...(await service.listHooks(c.env, target, windowOf(page))),
        id: target.id,
      }));
      return c.json(items.map((h) => api.present(id, h)), 200, paginationHeaders(c, page, total));
    })
    .openapi(create, async (c) => {
      const settings = newHookSettings(bodyOf(c, NewHook));
      const { created, id } = await withNamespace(c, kind, c.req.valid('param').id, async (target) => ({
        created: await service.createHook(c.env, target, settings, publicOrigin(c.env, c.req.url)),
        id: target.id,
      }));
      return c.json({ ...api.present(id, created.hook), signing_token: created.signingSecret }, 201);
    })
    .openapi(get, async (c) => {
      const { id, hook_id } = c.req.valid('param');
      const found = await withNamespace(c, kind, id, async (target) => ({ hook: await service.getHook(c.env, target, hook_id), id: target.id }));
      return c.json(api.present(found.id, found.hook), 200);
    })
    .openapi(edit, async (c) => {
      const { id, hook_id } = c.req.valid('param');
      const change = hookChange(bodyOf(c, HookChanges));
      const found = await withNamespace(c, kind, id, async (target) => ({ hook: await service.updateHook(c.env, target, hook_id, change), id: target.id }));
      return c.json(api.present(found.id, found.hook), 200);
    })
    .openapi(remove, async (c) => {
      const { id, hook_id } = c.req.valid('param');
      await withNamespace(c, kind, id, (target) => service.deleteHook(c.env, target, hook_id));
      return c.body(null, 204);
    })
    .openapi(events, async (c) => {
      const { id, hook_id } = c.req.valid('param');
      const q = c.req.valid('query');
      const page = pageOf(q);
      const status: StatusFilter | undefined = q.status;
      const { total, items } = await withNamespace(c, kind, id, (target) => service.listHookEvents(c.env, target, hook_id, status, windowOf(page)));
      return c.json(items.map(presentHookEvent), 200, paginationHeaders(c, page, total));
    })
    .openapi(resend, async (c) => {
      const { id, hook_id, hook_event_id } = c.req.valid('param');
      const status = await withNamespace(c, kind, id, (target) => service.resendHookEvent(c.env, target, hook_id, hook_event_id));
      return c.json({ response_status: status }, 201);
    })
    .openapi(test, async (c) => {
      const { id, hook_id } = c.req.valid('param');
      await withNamespace(c, kind, id, (target) => service.testHook(c.env, target, hook_id, 'member_events'));
      return c.json({ message: '201 Created' }, 201);
    })
    .openapi(testTrigger, async (c) => {
      const { id, hook_id, trigger } = c.req.valid('param');
      await withNamespace(c, kind, id, (target) => service.testHook(c.env, target, hook_id, trigger));
      return c.json({ message: '201 Created' }, 201);
    });
};
