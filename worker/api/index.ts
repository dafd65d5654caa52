import { apiAuth } from '../auth/api-auth';
import { account } from './account';
import { applications } from './applications';
import { accessRequestRoutes } from './access-requests';
import { impersonationTokens } from './impersonation-tokens';
import { memberRoutes } from './members';
import { groups, projects } from './namespaces';
import { KINDS } from '../auth/policy';
import { createRouter } from './router';
import { users } from './users';

/** Everything under /api/v4. Routes are documented by their schemas at /api/v4/openapi.json. */
export const api = createRouter();

api.openAPIRegistry.registerComponent('securitySchemes', 'PrivateToken', { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' });
api.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
api.doc31('/openapi.json', (c) => ({
  openapi: '3.1.0',
  info: { title: 'Knock API', version: 'v4', description: 'GitLab REST v4 compatible access requests, users, groups and projects.' },
  servers: [{ url: `${new URL(c.req.url).origin}/api/v4` }],
  security: [{ PrivateToken: [] }, { Bearer: [] }] as Record<string, string[]>[],
}));

api.use('*', async (c, next) => (c.req.path.endsWith('/openapi.json') ? next() : apiAuth(c, next)));
api.route('/', account);
api.route('/users', users);
api.route('/applications', applications);
api.route('/users', impersonationTokens);
api.route('/groups', groups);
api.route('/projects', projects);
// Written once, mounted for each kind (GitLab's %w[group project] loop).
for (const kind of [KINDS.group, KINDS.project]) {
  api.route(`/${kind.route}`, memberRoutes(kind));
  api.route(`/${kind.route}`, accessRequestRoutes(kind));
}
