import { createRoute, z } from '@hono/zod-openapi';
import { requireAdmin } from '../auth/api-auth';
import { instanceSettings, updateInstanceSettings } from '../store/instance-settings';
import { bodyContent, bodyOf, boolParam } from './params';
import { createApiRouter } from './router';

/** GitLab's application settings that Knock has (the rest of GitLab's are not part of the answer). */
const ApplicationSettingsSchema = z.object({ require_two_factor_authentication: z.boolean() }).openapi('ApplicationSettings');

const SettingsChangesSchema = z.object({ require_two_factor_authentication: boolParam().optional() }).openapi('ApplicationSettingsChanges');

const tags = ['Settings'];
const answer = { 200: { description: 'The settings', content: { 'application/json': { schema: ApplicationSettingsSchema } } } };

const getSettings = createRoute({ method: 'get', path: '/', tags, summary: "The instance's settings (administrators only)", responses: answer });

const putSettings = createRoute({
  method: 'put',
  path: '/',
  tags,
  summary: "Change the instance's settings (administrators only): require_two_factor_authentication",
  request: { body: bodyContent(SettingsChangesSchema) },
  responses: answer,
});

/** `GET` and `PUT /application/settings` (GitLab's application settings API). */
export const applicationSettings = createApiRouter();
applicationSettings.use('*', requireAdmin);
applicationSettings
  .openapi(getSettings, async (c) => c.json(await instanceSettings(c.env), 200))
  .openapi(putSettings, async (c) => c.json(await updateInstanceSettings(c.env, bodyOf(c, SettingsChangesSchema)), 200));
