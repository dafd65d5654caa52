import { createRoute, z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, ACCESS_LEVELS } from '../../shared/access-levels';
import { isGrantableLevel, type Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import { directory, type UserRow } from '../durable/directory';
import { namespaceObject } from '../durable/namespace';
import { unwrap } from '../durable/result';
import { json, problems, raise } from '../errors';
import { findVisible, namespaceIdParam } from './namespace-lookup';
import { offsetOf, paginationHeaders, paginationQuery } from './pagination';
import { bodyContent, bodyOf, intParam } from './params';
import { AccessRequestSchema, ApprovedAccessRequestSchema, presentAccessRequest, presentMember } from './presenters/member';
import { createRouter } from './router';

/**
 * `access_level` as GitLab clients send it (query, JSON number or form string). Levels no
 * approver may ever grant on this kind are a bad parameter; whether this approver may grant it
 * is decided later, by the policy (403).
 */
const accessLevelParam = (kind: Kind) =>
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

const usersById = async (env: Parameters<typeof directory>[0], ids: number[]): Promise<Map<number, UserRow>> =>
  new Map((await directory(env).getUsers([...new Set(ids)])).map((u) => [u.id, u]));

/**
 * The four access-request operations (contract §3), defined once and mounted for each kind, as
 * GitLab's lib/api/access_requests.rb loops over %w[group project].
 */
export const accessRequestRoutes = (kind: Kind) => {
  const tags = [`${kind.label} access requests`];
  const idParam = z.object({ id: namespaceIdParam() });
  const requesterParams = z.object({ id: namespaceIdParam(), user_id: intParam() });
  const ApproveBody = z.object({ access_level: accessLevelParam(kind).optional() });

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

  return createRouter()
    .openapi(list, async (c) => {
      const { id } = c.req.valid('param');
      const q = c.req.valid('query');
      const page = { page: q.page, perPage: q.per_page };
      const found = await findVisible(c, kind, id);
      const { total, items } = unwrap(
        await namespaceObject(c.env, found.ref.id).listAccessRequests(found.ref, found.actor, offsetOf(page), page.perPage),
      );
      const users = await usersById(c.env, items.map((r) => r.user_id));
      const origin = publicOrigin(c.env, c.req.url);
      const body = items.filter((r) => users.has(r.user_id)).map((r) => presentAccessRequest(r, users.get(r.user_id)!, origin));
      return json(body, 200, paginationHeaders(c, page, total)) as never;
    })
    .openapi(request, async (c) => {
      const found = await findVisible(c, kind, c.req.valid('param').id);
      const row = unwrap(
        await namespaceObject(c.env, found.ref.id).requestAccess(found.ref, found.actor, found.namespace.request_access_enabled),
      );
      const user = await directory(c.env).getUser(c.var.caller.id);
      if (!user) return raise(problems.unauthorized());
      return json(presentAccessRequest(row, user, publicOrigin(c.env, c.req.url)), 201) as never;
    })
    .openapi(approve, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const level = bodyOf(c, ApproveBody).access_level ?? c.req.valid('query').access_level ?? DEFAULT_APPROVAL_LEVEL;
      const found = await findVisible(c, kind, id);
      const member = unwrap(await namespaceObject(c.env, found.ref.id).approveAccessRequest(found.ref, found.actor, user_id, level));
      const users = await usersById(c.env, [member.user_id, c.var.caller.id]);
      const requester = users.get(member.user_id);
      if (!requester) return raise(problems.notFound());
      const approver = users.get(c.var.caller.id) ?? { ...c.var.caller, state: 'active' };
      return json(presentMember(member, requester, approver, publicOrigin(c.env, c.req.url)), 201) as never;
    })
    .openapi(remove, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const found = await findVisible(c, kind, id);
      unwrap(await namespaceObject(c.env, found.ref.id).removeAccessRequest(found.ref, found.actor, user_id));
      return new Response(null, { status: 204 }) as never;
    });
};
