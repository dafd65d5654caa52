import { createRoute, z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, ACCESS_LEVELS } from '../../shared/access-levels';
import { isGrantableLevel, type Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import * as service from '../services/namespaces';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, dateParam, intParam } from './params';
import { AccessRequestSchema, ApprovedAccessRequestSchema, presentAccessRequest, presentApprovedMember } from './presenters/member';
import { createApiRouter } from './router';
import { todayUtc } from '../clock';
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
export const membershipExpiry = (date: string | null): string | null => (date !== null && date < todayUtc() ? raise(problems.pastDate()) : date);

/**
 * A requester, from the names stored with the request. A request exists only while its requester
 * is active: blocking, deactivating or deleting a user removes their requests before that call
 * answers (durable/user-fanout.ts), and one that raced the change is removed when its object
 * pushes it to the Directory.
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
  // Beyond GitLab: `expires_at` makes the new membership end at 00:00 UTC that day.
  const ApproveBody = z.object({ access_level: accessLevelParam(kind).optional(), expires_at: dateParam().optional() });

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
    request: { params: idParam },
    responses: { 201: { description: 'The access request', content: { 'application/json': { schema: AccessRequestSchema } } } },
  });

  const approve = createRoute({
    method: 'put',
    path: '/{id}/access_requests/{user_id}/approve',
    tags,
    summary: `Approve an access request to a ${kind.name}`,
    request: { params: requesterParams, query: ApproveBody, body: bodyContent(ApproveBody) },
    responses: { 201: { description: 'The new member', content: { 'application/json': { schema: ApprovedAccessRequestSchema } } } },
  });

  const remove = createRoute({
    method: 'delete',
    path: '/{id}/access_requests/{user_id}',
    tags,
    summary: `Deny an access request to a ${kind.name}, or withdraw your own`,
    request: { params: requesterParams },
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
      const row = await withNamespace(c, kind, c.req.valid('param').id, (target) => service.requestAccess(c.env, target, c.var.caller));
      return c.json(presentAccessRequest(row, requester(row), publicOrigin(c.env, c.req.url)), 201);
    })
    .openapi(approve, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const body = bodyOf(c, ApproveBody);
      const query = c.req.valid('query');
      const level = body.access_level ?? query.access_level ?? DEFAULT_APPROVAL_LEVEL;
      const expiresAt = membershipExpiry(body.expires_at ?? query.expires_at ?? null);
      const member = await withNamespace(c, kind, id, (target) => service.approveAccessRequest(c.env, target, user_id, level, expiresAt));
      return c.json(presentApprovedMember(member, requester(member), c.var.caller, publicOrigin(c.env, c.req.url)), 201);
    })
    .openapi(remove, async (c) => {
      const { id, user_id } = c.req.valid('param');
      await withNamespace(c, kind, id, (target) => service.removeAccessRequest(c.env, target, user_id));
      return c.body(null, 204);
    });
};
