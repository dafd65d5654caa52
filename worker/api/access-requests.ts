import { createRoute, z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, ACCESS_LEVELS } from '../../shared/access-levels';
import { isGrantableLevel, type Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import type { Env } from '../env';
import { directory } from '../durable/directory';
import { namespaceObject, type AccessRequestRow } from '../durable/namespace';
import { unwrap } from '../durable/result';
import { json, problems, raise } from '../errors';
import { findNamespace, namespaceIdParam } from './namespace-lookup';
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

/**
 * Knock has no route that blocks or deactivates a user, so every user is active. One that ever
 * does must look the state up here instead (it is not stored with the request).
 */
const ACTIVE = 'active';

type Named<T> = Omit<T, 'username' | 'name'> & { username: string; name: string };

/**
 * Requesters' names come stored with their requests. Requests stored before names were (see
 * namespace-schema.ts) are looked up in the Directory, in one call for the page; a requester the
 * Directory does not know is left out, as before.
 */
const withNames = async <T extends Pick<AccessRequestRow, 'user_id' | 'username' | 'name'>>(
  env: Env,
  rows: T[],
): Promise<Named<T>[]> => {
  const unnamed = rows.filter((r) => r.username === null || r.name === null).map((r) => r.user_id);
  const users = new Map(unnamed.length === 0 ? [] : (await directory(env).getUsers([...new Set(unnamed)])).map((u) => [u.id, u]));
  return rows.flatMap((r) => {
    if (r.username !== null && r.name !== null) return [r as Named<T>];
    const user = users.get(r.user_id);
    return user ? [{ ...r, username: user.username, name: user.name }] : [];
  });
};

const requester = (r: { user_id: number; username: string; name: string }) => ({
  id: r.user_id,
  username: r.username,
  name: r.name,
  state: ACTIVE,
});

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
      const found = await findNamespace(c, kind, id);
      const { total, items } = unwrap(
        await namespaceObject(c.env, found.ref.id).listAccessRequests(found.ref, found.actor, offsetOf(page), page.perPage),
      );
      const origin = publicOrigin(c.env, c.req.url);
      const body = (await withNames(c.env, items)).map((r) => presentAccessRequest(r, requester(r), origin));
      return json(body, 200, paginationHeaders(c, page, total)) as never;
    })
    .openapi(request, async (c) => {
      const found = await findNamespace(c, kind, c.req.valid('param').id);
      const profile = { username: c.var.caller.username, name: c.var.caller.name };
      const row = unwrap(
        await namespaceObject(c.env, found.ref.id).requestAccess(found.ref, found.actor, found.namespace.request_access_enabled, profile),
      );
      return json(presentAccessRequest(row, requester({ ...row, ...profile }), publicOrigin(c.env, c.req.url)), 201) as never;
    })
    .openapi(approve, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const level = bodyOf(c, ApproveBody).access_level ?? c.req.valid('query').access_level ?? DEFAULT_APPROVAL_LEVEL;
      const found = await findNamespace(c, kind, id);
      const approved = unwrap(await namespaceObject(c.env, found.ref.id).approveAccessRequest(found.ref, found.actor, user_id, level));
      const [member] = await withNames(c.env, [approved]);
      if (!member) return raise(problems.notFound());
      const approver = { ...c.var.caller, state: ACTIVE };
      return json(presentMember(member, requester(member), approver, publicOrigin(c.env, c.req.url)), 201) as never;
    })
    .openapi(remove, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const found = await findNamespace(c, kind, id);
      unwrap(await namespaceObject(c.env, found.ref.id).removeAccessRequest(found.ref, found.actor, user_id));
      return new Response(null, { status: 204 }) as never;
    });
};
