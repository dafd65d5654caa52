import { createRoute } from '@hono/zod-openapi';
import { VersionSchema } from '../../shared/schemas';
import { KNOCK_VERSION } from '../../shared/version';
import { publicOrigin } from '../config';
import { presentUser, UserSchema } from './presenters/user';
import { createApiRouter } from './router';

const version = createRoute({
  method: 'get',
  path: '/version',
  summary: 'Version of this Knock server',
  responses: {
    200: {
      description: 'Version',
      content: { 'application/json': { schema: VersionSchema } },
    },
  },
});

const currentUser = createRoute({
  method: 'get',
  path: '/user',
  summary: 'The authenticated user',
  responses: { 200: { description: 'The caller', content: { 'application/json': { schema: UserSchema } } } },
});

/** `/version` and `/user`: what a GitLab client asks first. */
export const account = createApiRouter()
  .openapi(version, (c) => c.json({ version: KNOCK_VERSION, revision: 'knock' }, 200))
  .openapi(currentUser, async (c) => {
    const caller = c.var.caller;
    // The token's record carries the profile: no Directory round trip for what clients call most.
    // A token works only while its user is active (a block turns it into a tombstone).
    const user = { ...caller, email: caller.profile.email, state: 'active' as const, created_at: caller.profile.createdAt, two_factor_enabled: caller.profile.twoFactorEnabled };
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), true), 200);
  });
