import { createRoute, z } from '@hono/zod-openapi';
import type { Application } from '../../shared/api-types';
import { ApplicationSchema, LogoutDeliverySchema, NewApplicationResponseSchema } from '../../shared/schemas';
import { requireAdmin } from '../auth/api-auth';
import { directory } from '../durable/directory/directory';
import type { ApplicationRow } from '../durable/directory/types';
import { isKnownScope, parseScopes } from '../oauth/scopes';
import { isBackchannelLogoutUri, isRegistrableRedirectUri } from '../oauth/redirect-uri';
import { deleteApplication, logoutDeliveries, registerApplication } from '../services/applications';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { createApiRouter } from './router';

export const NewApplicationSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    redirect_uri: z
      .string()
      .max(4096)
      .transform((v) => v.split(/\s+/).filter(Boolean))
      .refine((uris) => uris.length > 0 && uris.every(isRegistrableRedirectUri), { message: 'is invalid' }),
    scopes: z
      .string()
      .default('api')
      .transform(parseScopes)
      .refine((s) => s.length > 0 && s.every(isKnownScope), { message: 'does not have a valid value' }),
    confidential: boolParam().default(true),
    // OpenID Connect Back-Channel Logout 1.0 §2.2: where Knock sends logout tokens (checked by the
    // URL guard here and before every delivery, as a webhook's URL is).
    backchannel_logout_uri: z
      .string()
      .trim()
      .max(2048)
      .optional()
      .transform((v) => v || null)
      .refine((v) => v === null || isBackchannelLogoutUri(v), { message: 'is invalid' }),
    // OpenID Connect RP-Initiated Logout 1.0 §3.1: whitespace-separated, each matched exactly.
    post_logout_redirect_uris: z
      .string()
      .max(4096)
      .default('')
      .transform((v) => v.split(/\s+/).filter(Boolean))
      .refine((uris) => uris.every(isRegistrableRedirectUri), { message: 'is invalid' }),
  })
  .openapi('NewApplication');

const present = (a: ApplicationRow): Application => ({
  id: a.id,
  application_id: a.client_id,
  application_name: a.name,
  callback_url: a.redirect_uris.join('\n'),
  confidential: a.confidential,
  backchannel_logout_uri: a.backchannel_logout_uri,
  post_logout_redirect_uris: a.post_logout_redirect_uris,
});

const create = createRoute({
  method: 'post',
  path: '/',
  summary: 'Register an OAuth application (administrators only); the secret is shown once',
  request: { body: bodyContent(NewApplicationSchema) },
  responses: {
    201: {
      description: 'The application with its secret',
      content: { 'application/json': { schema: NewApplicationResponseSchema } },
    },
  },
});

const list = createRoute({
  method: 'get',
  path: '/',
  summary: 'List OAuth applications (administrators only)',
  responses: { 200: { description: 'Applications', content: { 'application/json': { schema: z.array(ApplicationSchema) } } } },
});

const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  summary: 'Delete an OAuth application and end every grant made to it',
  request: { params: z.object({ id: intParam() }) },
  responses: { 204: { description: 'Deleted' }, 404: { description: '404 Application Not Found' } },
});

const logouts = createRoute({
  method: 'get',
  path: '/{id}/logout_deliveries',
  summary: "An application's back-channel logout deliveries of the last seven days, newest first",
  request: { params: z.object({ id: intParam() }), query: z.object(paginationQuery) },
  responses: {
    200: { description: 'Delivery attempts', content: { 'application/json': { schema: z.array(LogoutDeliverySchema) } } },
    404: { description: '404 Application Not Found' },
  },
});

export const applications = createApiRouter();
applications.use('*', requireAdmin);
applications
  .openapi(create, async (c) => {
    const { application, secret } = await registerApplication(c.env, bodyOf(c, NewApplicationSchema));
    return c.json({ ...present(application), secret }, 201);
  })
  .openapi(list, async (c) => c.json((await directory(c.env).listApplications()).map(present), 200))
  .openapi(logouts, async (c) => {
    const page = pageOf(c.req.valid('query'));
    const { total, items } = await logoutDeliveries(c.env, c.req.valid('param').id, windowOf(page));
    return c.json(items, 200, paginationHeaders(c, page, total));
  })
  .openapi(remove, async (c) => {
    await deleteApplication(c.env, c.req.valid('param').id);
    return c.body(null, 204);
  });
