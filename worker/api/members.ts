import { createRoute, z } from '@hono/zod-openapi';
import type { Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import type { EffectiveMember } from '../durable/namespace-registry';
import * as service from '../services/namespaces';
import { accessLevelParam, membershipExpiry } from './access-requests';
import { namespaceIdParam, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, dateParam, intParam } from './params';
import { MemberSchema, presentMember } from './presenters/member';
import { createApiRouter } from './router';
import { raises } from './error-answers';

const presentEffective = (m: EffectiveMember, origin: string) =>
  presentMember(m, { id: m.user_id, username: m.username, name: m.name, state: m.state }, m.created_by, origin);

/**
 * GitLab's members API (lib/api/members.rb), written once and mounted for groups and projects:
 * direct members from the group's or project's own object, members with inherited ones from the
 * membership index. Managing members needs what managing access requests needs.
 */
export const memberRoutes = (kind: Kind) => {
  const tags = [`${kind.label} members`];
  const idParam = z.object({ id: namespaceIdParam() });
  const memberParams = z.object({ id: namespaceIdParam(), user_id: intParam() });
  const request = { params: idParam, query: z.object(paginationQuery) };
  const list = { 200: { description: 'Members', content: { 'application/json': { schema: z.array(MemberSchema) } } } };
  const one = (status: 200 | 201, description: string) => ({ [status]: { description, content: { 'application/json': { schema: MemberSchema } } } });
  const NewMember = z.object({ user_id: intParam(), access_level: accessLevelParam(kind), expires_at: dateParam().optional() }).openapi(`New${kind.label}Member`);
  // GitLab's `PUT …/members/:user_id` requires `access_level` (lib/api/members.rb).
  const MemberChange = z
    .object({
      access_level: accessLevelParam(kind),
      // An empty value (or null) takes the expiry away.
      expires_at: z.union([dateParam(), z.literal(''), z.null()]).optional(),
    })
    .openapi(`${kind.label}MemberChange`);

  // GitLab's `query`: members whose username or name contains it (docs.gitlab.com/api/members/).
  const search = { params: idParam, query: z.object({ ...paginationQuery, query: z.string().max(255).optional().openapi({ example: 'ali' }) }) };
  const direct = createRoute({ method: 'get', path: '/{id}/members', tags, summary: `Direct members of a ${kind.name}`, request: search, responses: list });
  const all = createRoute({
    method: 'get',
    path: '/{id}/members/all',
    tags,
    summary: `Members of a ${kind.name}, including those inherited from ancestor groups (highest level each)`,
    request,
    responses: list,
  });
  const getAll = createRoute({
    method: 'get',
    path: '/{id}/members/all/{user_id}',
    tags,
    summary: `A member of a ${kind.name}, direct or inherited (the highest level)`,
    request: { params: memberParams },
    responses: one(200, 'The member'),
  });
  const get = createRoute({
    method: 'get',
    path: '/{id}/members/{user_id}',
    tags,
    summary: `A direct member of a ${kind.name}`,
    request: { params: memberParams },
    responses: one(200, 'The member'),
  });
  const add = createRoute({
    method: 'post',
    path: '/{id}/members',
    tags,
    summary: `Add a member to a ${kind.name}; their pending access request goes`,
    request: { params: idParam, body: bodyContent(NewMember) },
    responses: { ...one(201, 'The new member'), ...raises(409) },
  });
  const edit = createRoute({
    method: 'put',
    path: '/{id}/members/{user_id}',
    tags,
    summary: `Change a member's access level or expiry on a ${kind.name}`,
    request: { params: memberParams, body: bodyContent(MemberChange) },
    responses: one(200, 'The member'),
  });
  const remove = createRoute({
    method: 'delete',
    path: '/{id}/members/{user_id}',
    tags,
    summary: `Remove a member from a ${kind.name}, or leave it`,
    request: { params: memberParams },
    responses: { 204: { description: 'Removed' } },
  });

  return createApiRouter()
    .openapi(direct, async (c) => {
      const page = pageOf(c.req.valid('query'));
      const query = c.req.valid('query').query?.trim();
      const { total, items } = await withNamespace(c, kind, c.req.valid('param').id, (target) => service.listMembers(c.env, target, windowOf(page), query));
      const origin = publicOrigin(c.env, c.req.url);
      return c.json(
        items.map((m) => presentMember(m.member, m.user, m.createdBy, origin)),
        200,
        paginationHeaders(c, page, total),
      );
    })
    .openapi(all, async (c) => {
      const page = pageOf(c.req.valid('query'));
      const { total, members } = await withNamespace(c, kind, c.req.valid('param').id, (target) => service.listAllMembers(c.env, target, windowOf(page)));
      const origin = publicOrigin(c.env, c.req.url);
      return c.json(members.map((m) => presentEffective(m, origin)), 200, paginationHeaders(c, page, total));
    })
    .openapi(getAll, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const member = await withNamespace(c, kind, id, (target) => service.getEffectiveMember(c.env, target, user_id));
      return c.json(presentEffective(member, publicOrigin(c.env, c.req.url)), 200);
    })
    .openapi(get, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const m = await withNamespace(c, kind, id, (target) => service.getMember(c.env, target, user_id));
      return c.json(presentMember(m.member, m.user, m.createdBy, publicOrigin(c.env, c.req.url)), 200);
    })
    .openapi(add, async (c) => {
      const body = bodyOf(c, NewMember);
      const expiresAt = membershipExpiry(body.expires_at ?? null);
      const m = await withNamespace(c, kind, c.req.valid('param').id, (target) =>
        service.addMember(c.env, target, body.user_id, body.access_level, expiresAt),
      );
      return c.json(presentMember(m.member, m.user, m.createdBy, publicOrigin(c.env, c.req.url)), 201);
    })
    .openapi(edit, async (c) => {
      const { id, user_id } = c.req.valid('param');
      const body = bodyOf(c, MemberChange);
      const expiresAt = body.expires_at === undefined ? undefined : membershipExpiry(body.expires_at || null);
      const m = await withNamespace(c, kind, id, (target) =>
        service.updateMember(c.env, target, user_id, { accessLevel: body.access_level, expiresAt }),
      );
      return c.json(presentMember(m.member, m.user, m.createdBy, publicOrigin(c.env, c.req.url)), 200);
    })
    .openapi(remove, async (c) => {
      const { id, user_id } = c.req.valid('param');
      await withNamespace(c, kind, id, (target) => service.removeMember(c.env, target, user_id));
      return c.body(null, 204);
    });
};
