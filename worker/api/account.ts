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
    const user = await directory(c.env).getUser(c.var.caller.id);
    if (!user) return raise(problems.unauthorized());
    return json(presentUser(user, publicOrigin(c.env, c.req.url), true)) as never;
  });
