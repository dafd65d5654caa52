import { createRoute, z } from '@hono/zod-openapi';
import type { Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory';
import { namespaceObject } from '../durable/namespace';
import { json } from '../errors';
import { findVisible, namespaceIdParam } from './namespace-lookup';
import { offsetOf, paginationHeaders, paginationQuery } from './pagination';
import { MemberSchema, presentMember } from './presenters/member';
import { createRouter } from './router';

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

  return createRouter()
    .openapi(direct, async (c) => {
      const q = c.req.valid('query');
      const page = { page: q.page, perPage: q.per_page };
      const found = await findVisible(c, kind, c.req.valid('param').id);
      const { total, items } = await namespaceObject(c.env, found.ref.id).listMembers(found.ref, offsetOf(page), page.perPage);
      const ids = items.flatMap((m) => (m.created_by === null ? [m.user_id] : [m.user_id, m.created_by]));
      const users = new Map((await directory(c.env).getUsers([...new Set(ids)])).map((u) => [u.id, u]));
      const origin = publicOrigin(c.env, c.req.url);
      const body = items
        .filter((m) => users.has(m.user_id))
        .map((m) => presentMember(m, users.get(m.user_id)!, m.created_by === null ? null : users.get(m.created_by) ?? null, origin));
      return json(body, 200, paginationHeaders(c, page, total)) as never;
    })
    .openapi(all, async (c) => {
      const q = c.req.valid('query');
      const page = { page: q.page, perPage: q.per_page };
      const found = await findVisible(c, kind, c.req.valid('param').id);
      // The index lags only while an outbox row waits; deliver those first (read-your-writes).
      const scope = [found.ref.id, ...found.ancestorIds];
      await Promise.all(scope.map((id) => namespaceObject(c.env, id).flushMembershipIndex()));
      const { total, members } = await directory(c.env).listEffectiveMembers(scope, offsetOf(page), page.perPage);
      const origin = publicOrigin(c.env, c.req.url);
      const body = members.map((m) =>
        presentMember(m, { id: m.user_id, username: m.username, name: m.name, state: m.state }, m.created_by && { ...m.created_by, state: 'active' }, origin),
      );
      return json(body, 200, paginationHeaders(c, page, total)) as never;
    });
};
