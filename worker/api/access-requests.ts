import { createRoute, z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, ACCESS_LEVELS } from '../../shared/access-levels';
import { isGrantableLevel, type Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import * as service from '../services/namespaces';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, boolParam, endParam, intParam } from './params';
import {
  AccessRequestSchema,
  ApprovedAccessRequestSchema,
  presentAccessRequest,
  presentApprovedMember,
  presentRuleApproved,
  RuleApprovedAccessRequestSchema,
} from './presenters/member';
import { createApiRouter } from './router';
import { clock } from '../clock';
import { endHasPassed } from '../dates';
import { problems, raise } from '../errors';

/**
 * `access_level` as GitLab clients send it (query, JSON number or form string). Levels no
 * approver may ever grant on this kind are a bad parameter; whether this approver may grant it
 * is decided later, by the policy (403).
 */
export const accessLevelParam = (kind: Kind) =>
  z
    .union([z.number(), z.string()])
    .transform((v, ctx) => {
      const level = typeof v === 'number' ? v : /^\s*[0-9]{1,3}\s*$/.test(v) ? Number(v) : NaN;
      if (Number.isInteger(level) && isGrantableLevel(kind, level)) return level;
      ctx.addIssue({ code: 'custom', message: 'does not have a valid value' });
      return z.NEVER;
    })
    .openapi({
      type: 'integer',
      enum: ACCESS_LEVELS.map((l) => l.value).filter((v) => isGrantableLevel(kind, v)),
      default: DEFAULT_APPROVAL_LEVEL,
    });

/**
 * A membership's `expires_at`: GitLab's FutureDateValidator (app/validators/future_date_validator.rb)
 * refuses a date before today, and allows today (GitLab issue 12702). A membership ends at 00:00
 * UTC of its date ("from that date onward, the user can no longer access the project", GitLab's
 * project members docs), so one that ends today has ended when it is made: the group's or
 * project's object removes it at once, as GitLab's expiry job (RemoveExpiredMembersWorker) does
 * that day, and records its expiry.
 */
export const membershipExpiry = (date: string | null): string | null => (date !== null && endHasPassed(date, clock.now()) ? raise(problems.pastDate()) : date);

/** A request's or a denial's reason: text of at most 1,000 characters (blank is none). */
const reasonParam = () =>
  z
    .string()
    .max(1000)
    .transform((v) => (v.trim() === '' ? null : v))
    .openapi({ type: 'string', maxLength: 1000 });

/**
 * A requester, from the names stored with the request. A request exists only while its requester
 * is active: blocking, deactivating or deleting a user removes their requests before that call
 * answers (durable/directory/user-fanout.ts), and one that raced the change is removed when its object
 * pushes it to its tree's index partition.
 */
const requester = (r: { user_id: number; username: string; name: string }) => ({
  id: r.user_id,
  username: r.username,
  name: r.name,
  state: 'active' as const,
});

/**
 * The four access-request operations (GitLab's access requests API), defined once and mounted for each kind, as
 * GitLab's lib/api/access_requests.rb loops over %w[group project].
 */
export const accessRequestRoutes = (kind: Kind) => {
  const tags = [`${kind.label} access requests`];
  const idParam = z.object({ id: namespaceIdParam() });
  const requesterParams = z.object({ id: namespaceIdParam(), user_id: intParam() });
  // Beyond GitLab: `expires_at` makes the new membership end (00:00 UTC of a date, or the minute
  // of a date-time); both default to what was asked.
  const ApproveBody = z.object({ access_level: accessLevelParam(kind).optional(), expires_at: endParam().optional() });
  // Beyond GitLab: why, which level, until when; `break_glass` asks a break-glass rule for access at once.
  const RequestBody = z.object({
    reason: reasonParam().optional(),
    access_level: accessLevelParam(kind).optional(),
    expires_at: endParam().optional(),
    break_glass: boolParam().optional(),
  });
  const DenyBody = z.object({ reason: reasonParam().optional() });

  const list = createRoute({
    method: 'get',
    path: '/{id}/access_requests',
    tags,
    summary: `List pending access requests of a ${kind.name}, oldest first`,
    request: { params: idParam, query: z.object(paginationQuery) },
    responses: { 200: { description: 'Access requests', content: { 'application/json': { schema: z.array(AccessRequestSchema) } } } },
  });

  const request = createRoute({
    method: 'post',
    path: '/{id}/access_requests',
    tags,
    summary: `Request access to a ${kind.name}`,
    request: { params: idParam, query: RequestBody, body: bodyContent(RequestBody) },
    responses: {
      201: {
        description: 'The access request, or the membership a rule granted at once (auto-approve, break-glass)',
        content: { 'application/json': { schema: z.union([AccessRequestSchema, RuleApprovedAccessRequestSchema]) } },
      },
    },
  });

  const approve = createRoute({
    method: 'put',
    path: '/{id}/access_requests/{user_id}/approve',
    tags,
    summary: `Approve an access request to a ${kind.name}`,
    request: { params: requesterParams, query: ApproveBody, body: bodyContent(ApproveBody) },
    responses: {
      201: { description: 'The new member', content: { 'application/json': { schema: ApprovedAccessRequestSchema } } },
      202: { description: 'Approval counted; more are required', content: { 'application/json': { schema: AccessRequestSchema } } },
    },
  });

  const remove = createRoute({
    method: 'delete',
    path: '/{id}/access_requests/{user_id}',
    tags,
    summary: `Deny an access request to a ${kind.name}, or withdraw your own`,
    request: { params: requesterParams, query: DenyBody, body: bodyContent(DenyBody) },
    responses: { 204: { description: 'Denied or withdrawn' } },
  });

  return createApiRouter()
    .openapi(list, async (c) => {
      const { id } = c.req.valid('param');
      const page = pageOf(c.req.valid('query'));
      const { total, items } = await withNamespace(c, kind, id, (target) => service.listAccessRequests(c.env, target, windowOf(page)));
      const origin = publicOrigin(c.env, c.req.url);
      return c.json(
        items.map((r) => presentAccessRequest(r, requester(r), origin)),
        200,
        paginationHeaders(c, page, total),
      );
    })
    .openapi(request, async (c) => {
      const body = bodyOf(c, RequestBody);
      const query = c.req.valid('query');
      const ask = {
        reason: body.reason ?? query.reason ?? null,
        accessLevel: body.access_level ?? query.access_level ?? null,
        expiresAt: membershipExpiry(body.expires_at ?? query.expires_at ?? null),
        breakGlass: body.break_glass ?? query.break_glass ?? false,
      };
      const outcome = await withNamespace(c, kind, c.req.valid('param').id, (target) => service.requestAccess(c.env, target, c.var.caller, ask));
      const origin = publicOrigin(c.env, c.req.url);
      if ('pending' in outcome) return c.json(presentAccessRequest(outcome.pending, requester(outcome.pending), origin), 201);
      return c.json(presentRuleApproved(outcome.approved, requester(outcome.approved), outcome.request, outcome.by, origin), 201);
    })
    .openapi(approve, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const body = bodyOf(c, ApproveBody);
      const query = c.req.valid('query');
      const given = body.expires_at ?? query.expires_at;
      const choice = { accessLevel: body.access_level ?? query.access_level, expiresAt: given === undefined ? undefined : membershipExpiry(given) };
      const outcome = await withNamespace(c, kind, id, (target) => service.approveAccessRequest(c.env, target, user_id, choice));
      const origin = publicOrigin(c.env, c.req.url);
      if ('pending' in outcome) return c.json(presentAccessRequest(outcome.pending, requester(outcome.pending), origin), 202);
      return c.json(presentApprovedMember(outcome.approved, requester(outcome.approved), c.var.caller, origin), 201);
    })
    .openapi(remove, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const reason = bodyOf(c, DenyBody).reason ?? c.req.valid('query').reason ?? null;
      await withNamespace(c, kind, id, (target) => service.removeAccessRequest(c.env, target, user_id, reason));
      return c.body(null, 204);
    });
};
