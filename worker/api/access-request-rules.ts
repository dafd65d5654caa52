import { createRoute, z } from '@hono/zod-openapi';
import { EffectiveAccessRequestRulesSchema } from '../../shared/schemas';
import { type Kind } from '../auth/policy';
import { publicRules } from '../durable/namespace/request-rules';
import * as service from '../services/namespaces';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { accessLevelParam } from './access-requests';
import { createApiRouter } from './router';

/** A year, the longest any rule may bound access or a wait by. */
const MAX_HOURS = 8760;
const hours = () => z.number().int().min(1).max(MAX_HOURS);

/** A domain name as an email's part after `@` (RFC 5321 §4.1.2), compared without case. */
const domain = () =>
  z
    .string()
    .max(253)
    .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i, { message: 'is not a domain name' })
    .transform((v) => v.toLowerCase());

/**
 * The rules as a client sends them (`PUT …/access_request_rules`, JSON): every field optional,
 * an absent one takes its default (no requirement). `member_of` names a group by full path or id.
 */
export const rulesBody = (kind: Kind) =>
  z.object({
    reason_required: z.boolean().default(false),
    max_duration_hours: hours().nullable().default(null),
    pending_expires_after_days: z.number().int().min(1).max(365).nullable().default(null),
    approvals_required: z.number().int().min(1).max(3).default(1),
    auto_approve: z
      .array(
        z.object({
          email_domain: domain().optional(),
          member_of: z.string().min(1).max(255).optional(),
          max_access_level: accessLevelParam(kind).optional(),
          max_duration_hours: hours().optional(),
        }),
      )
      .max(20)
      .default([]),
    break_glass: z.object({ access_level: accessLevelParam(kind), max_duration_hours: hours() }).nullable().default(null),
  });

const answer = (r: service.EffectiveRules) => ({ ...publicRules(r.rules), inherited_from: r.inheritedFrom });

/**
 * Knock's access request rules of a group or project (no GitLab counterpart): read by anyone who
 * may see it (a requester learns what a request needs), set and cleared by who may edit its
 * settings. A project's own rules override its group's; else the nearest ancestor's apply.
 */
export const accessRequestRuleRoutes = (kind: Kind) => {
  const tags = [`${kind.label} access requests`];
  const params = z.object({ id: namespaceIdParam() });
  const Body = rulesBody(kind);
  const content = { 'application/json': { schema: EffectiveAccessRequestRulesSchema } };

  const get = createRoute({
    method: 'get',
    path: '/{id}/access_request_rules',
    tags,
    summary: `The access request rules in force on a ${kind.name}: its own, or inherited (inherited_from)`,
    request: { params },
    responses: { 200: { description: 'The rules in force', content } },
  });
  const put = createRoute({
    method: 'put',
    path: '/{id}/access_request_rules',
    tags,
    summary: `Set the ${kind.name}'s own access request rules (absent fields: no requirement)`,
    request: { params, body: { content: { 'application/json': { schema: Body } }, required: true } },
    responses: { 200: { description: 'The rules in force', content } },
  });
  const clear = createRoute({
    method: 'delete',
    path: '/{id}/access_request_rules',
    tags,
    summary: `Drop the ${kind.name}'s own access request rules: it inherits again`,
    request: { params },
    responses: { 200: { description: 'The rules in force', content } },
  });

  return createApiRouter()
    .openapi(get, async (c) => c.json(answer(await withNamespace(c, kind, c.req.valid('param').id, (t) => service.accessRequestRules(c.env, t))), 200))
    .openapi(put, async (c) => {
      const rules = c.req.valid('json');
      return c.json(answer(await withNamespace(c, kind, c.req.valid('param').id, (t) => service.setAccessRequestRules(c.env, t, rules))), 200);
    })
    .openapi(clear, async (c) => c.json(answer(await withNamespace(c, kind, c.req.valid('param').id, (t) => service.setAccessRequestRules(c.env, t, null))), 200));
};
