import { createRoute, z } from '@hono/zod-openapi';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory';
import { json, problems, raise } from '../errors';
import { presentUser, UserDetail } from './presenters/user';
import { createRouter } from './router';

export const VERSION = '0.1.0';

const version = createRoute({
  method: 'get',
  path: '/version',
  summary: 'Version of this Knock server',
  responses: {
    200: {
      description: 'Version',
      content: { 'application/json': { schema: z.object({ version: z.string(), revision: z.string() }) } },
    },
  },
});

const currentUser = createRoute({
  method: 'get',
  path: '/user',
  summary: 'The authenticated user',
  responses: { 200: { description: 'The caller', content: { 'application/json': { schema: UserDetail } } } },
});

/** `/version` and `/user`: what a GitLab client asks first. */
export const account = createRouter()
  .openapi(version, (c) => json({ version: VERSION, revision: 'knock' }) as never)
  .openapi(currentUser, async (c) => {
    const caller = c.var.caller;
    // The token's record carries the profile; only records older than that need the Directory.
    const user = caller.profile
      ? { id: caller.id, username: caller.username, name: caller.name, email: caller.profile.email, admin: caller.admin, state: 'active', created_at: caller.profile.createdAt }
      : await directory(c.env).getUser(caller.id);
    if (!user) return raise(problems.unauthorized());
    return json(presentUser(user, publicOrigin(c.env, c.req.url), true)) as never;
  });
