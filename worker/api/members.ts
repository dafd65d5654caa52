import { createRoute, z } from '@hono/zod-openapi';
import type { Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import * as service from '../services/namespaces';
import { findNamespace, namespaceIdParam } from './finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { MemberSchema, presentMember } from './presenters/member';
import { createApiRouter } from './router';

/** Direct members (from the group's or project's own object) and members with inherited ones. */
export const memberRoutes = (kind: Kind) => {
  const tags = [`${kind.label} members`];
  const request = { params: z.object({ id: namespaceIdParam() }), query: z.object(paginationQuery) };
  const responses = { 200: { description: 'Members', content: { 'application/json': { schema: z.array(MemberSchema) } } } };

  const direct = createRoute({ method: 'get', path: '/{id}/members', tags, summary: `Direct members of a ${kind.name}`, request, responses });
  const all = createRoute({
    method: 'get',
    path: '/{id}/members/all',
    tags,
    summary: `Members of a ${kind.name}, including those inherited from ancestor groups (highest level each)`,
    request,
    responses,
  });

  return createApiRouter()
    .openapi(direct, async (c) => {
      const page = pageOf(c.req.valid('query'));
      const target = await findNamespace(c, kind, c.req.valid('param').id);
      const { total, items } = await service.listMembers(c.env, target, windowOf(page));
      const origin = publicOrigin(c.env, c.req.url);
      return c.json(
        items.map((m) => presentMember(m.member, m.user, m.createdBy, origin)),
        200,
        paginationHeaders(c, page, total),
      );
    })
    .openapi(all, async (c) => {
      const page = pageOf(c.req.valid('query'));
      const target = await findNamespace(c, kind, c.req.valid('param').id);
      const { total, members } = await service.listAllMembers(c.env, target, windowOf(page));
      const origin = publicOrigin(c.env, c.req.url);
      const body = members.map((m) =>
        presentMember(m, { id: m.user_id, username: m.username, name: m.name, state: m.state }, m.created_by && { ...m.created_by, state: 'active' }, origin),
      );
      return c.json(body, 200, paginationHeaders(c, page, total));
    });
};
