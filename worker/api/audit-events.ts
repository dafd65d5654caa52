import { createRoute, z } from '@hono/zod-openapi';
import type { Kind } from '../auth/policy';
import type { AuditFilter } from '../durable/event-log';
import * as service from '../services/events';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { instantParam, intParam } from './params';
import { AuditEventSchema, presentAuditEvent } from './presenters/audit-event';
import { createApiRouter } from './router';

const timeFilter = {
  created_after: instantParam().optional().openapi({ description: 'Events created at or after this time (ISO 8601)' }),
  created_before: instantParam().optional().openapi({ description: 'Events created at or before this time (ISO 8601)' }),
};

const filterOf = (q: { created_after?: string; created_before?: string }): AuditFilter => ({ createdAfter: q.created_after, createdBefore: q.created_before });

const auditEvents = { 200: { description: 'Audit events, newest first', content: { 'application/json': { schema: z.array(AuditEventSchema) } } } };
const auditEvent = { 200: { description: 'The audit event', content: { 'application/json': { schema: AuditEventSchema } } } };
const eventIdParam = () => intParam().openapi({ description: 'The id of the audit event, as its log lists it' });

/**
 * `GET /groups/:id/audit_events` and `GET /projects/:id/audit_events` (GitLab's audit events
 * API), written once: a group's log includes its subgroups' and projects' events.
 */
export const auditEventRoutes = (kind: Kind) => {
  const who = kind.name === 'group' ? "Owner: everyone's; Developer or Maintainer: their own" : "Maintainer or Owner: everyone's; Developer: their own";
  const list = createRoute({
    method: 'get',
    path: '/{id}/audit_events',
    tags: [`${kind.label} audit events`],
    summary: `Audit events of a ${kind.name}${kind.name === 'group' ? ' and everything in it' : ''}, newest first (${who})`,
    request: { params: z.object({ id: namespaceIdParam() }), query: z.object({ ...timeFilter, ...paginationQuery }) },
    responses: auditEvents,
  });
  const one = createRoute({
    method: 'get',
    path: '/{id}/audit_events/{audit_event_id}',
    tags: [`${kind.label} audit events`],
    summary: `One audit event of a ${kind.name} (${who})`,
    request: { params: z.object({ id: namespaceIdParam(), audit_event_id: eventIdParam() }) },
    responses: auditEvent,
  });
  return createApiRouter()
    .openapi(list, async (c) => {
      const q = c.req.valid('query');
      const page = pageOf(q);
      const { total, items } = await withNamespace(c, kind, c.req.valid('param').id, (target) =>
        service.listAuditEvents(c.env, target, filterOf(q), windowOf(page)),
      );
      return c.json(items.map(presentAuditEvent), 200, paginationHeaders(c, page, total));
    })
    .openapi(one, async (c) => {
      const { id, audit_event_id } = c.req.valid('param');
      const event = await withNamespace(c, kind, id, (target) => service.getAuditEvent(c.env, target, audit_event_id));
      return c.json(presentAuditEvent(event), 200);
    });
};

/** `GET /audit_events`: every group's and project's events (administrators; GitLab's instance audit events). */
const instanceList = createRoute({
  method: 'get',
  path: '/',
  tags: ['Instance audit events'],
  summary: "Every group's and project's audit events, newest first (administrators)",
  request: {
    query: z.object({
      ...timeFilter,
      entity_type: z.enum(['Group', 'Project']).optional(),
      entity_id: intParam().optional().openapi({ description: 'With entity_type: one group or project' }),
      ...paginationQuery,
    }),
  },
  responses: auditEvents,
});

const instanceOne = createRoute({
  method: 'get',
  path: '/{id}',
  tags: ['Instance audit events'],
  summary: 'One instance audit event (administrators)',
  request: { params: z.object({ id: eventIdParam() }) },
  responses: auditEvent,
});

export const instanceAuditEvents = createApiRouter()
  .openapi(instanceList, async (c) => {
    const q = c.req.valid('query');
    const page = pageOf(q);
    const filter: AuditFilter = {
      ...filterOf(q),
      entityType: q.entity_type === undefined ? undefined : q.entity_type === 'Group' ? 'group' : 'project',
      entityId: q.entity_type === undefined ? undefined : q.entity_id,
    };
    const { total, items } = await service.listInstanceAuditEvents(c.env, c.var.caller, filter, windowOf(page));
    return c.json(items.map(presentAuditEvent), 200, paginationHeaders(c, page, total));
  })
  .openapi(instanceOne, async (c) => {
    const event = await service.getInstanceAuditEvent(c.env, c.var.caller, c.req.valid('param').id);
    return c.json(presentAuditEvent(event), 200);
  });
