import { KNOCK_VERSION } from '../../shared/version';
import { apiAuth } from '../auth/api-auth';
import { KINDS } from '../auth/policy';
import { account } from './account';
import { accessRequestRoutes } from './access-requests';
import { accessRequestRuleRoutes } from './access-request-rules';
import { applications } from './applications';
import { applicationSettings } from './application-settings';
import { auditEventRoutes, instanceAuditEvents } from './audit-events';
import { ErrorSchema, withErrorAnswers } from './error-answers';
import { hookRoutes } from './hooks';
import { impersonationTokens } from './impersonation-tokens';
import { answerInboxPoll, inboxRoutes } from './inbox';
import { memberRoutes } from './members';
import { groups, projects } from './namespaces';
import { formArrays } from './params';
import { personalAccessTokens } from './personal-access-tokens';
import { createApiRouter, createRouter } from './router';
import { signingKeys } from './signing-keys';
import { users } from './users';
import type { BaseEnv } from '../env';

/** Every route of /api/v4 that needs a caller: all of them but the OpenAPI document. */
const authenticated = createApiRouter();
// Before the token's check: an inbox poll's ETag makes its one object call, which may answer it.
authenticated.use('/access_requests', answerInboxPoll);
authenticated.use('*', apiAuth);
authenticated.use('*', formArrays);
authenticated.route('/', account);
authenticated.route('/', inboxRoutes);
authenticated.route('/users', users);
authenticated.route('/users', impersonationTokens);
authenticated.route('/', personalAccessTokens);
authenticated.route('/applications', applications);
authenticated.route('/application/settings', applicationSettings);
authenticated.route('/admin/signing_keys', signingKeys);
authenticated.route('/audit_events', instanceAuditEvents);
authenticated.route('/groups', groups);
authenticated.route('/projects', projects);
// Written once, mounted for each kind (GitLab's %w[group project] loop).
for (const kind of [KINDS.group, KINDS.project]) {
  authenticated.route(`/${kind.route}`, memberRoutes(kind));
  authenticated.route(`/${kind.route}`, accessRequestRoutes(kind));
  authenticated.route(`/${kind.route}`, accessRequestRuleRoutes(kind));
  authenticated.route(`/${kind.route}`, hookRoutes(kind));
  authenticated.route(`/${kind.route}`, auditEventRoutes(kind));
}

/** Everything under /api/v4. Routes are documented by their schemas at /api/v4/openapi.json. */
export const api = createRouter<BaseEnv>();

api.openAPIRegistry.registerComponent('securitySchemes', 'PrivateToken', { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' });
api.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
// Registered before the authenticated routes, so it answers without a token; `/groups/openapi.json`
// and the like are ordinary paths of those routes (a group named so, or 404).
const security: Record<string, string[]>[] = [{ PrivateToken: [] }, { Bearer: [] }];
api.openAPIRegistry.register('Error', ErrorSchema);
api.get('/openapi.json', (c) =>
  c.json(
    withErrorAnswers(
      api.getOpenAPI31Document({
        openapi: '3.1.0',
        info: { title: 'Knock API', version: KNOCK_VERSION, description: 'GitLab REST v4 compatible access requests, users, groups and projects.' },
        servers: [{ url: `${new URL(c.req.url).origin}/api/v4` }],
        security,
      }),
    ),
  ),
);
api.route('/', authenticated);
