import { createRoute, z } from '@hono/zod-openapi';
import type { Application } from '../../shared/api-types';
import { ApplicationSchema, NewApplicationResponseSchema } from '../../shared/schemas';
import { requireAdmin } from '../auth/api-auth';
import { hex, randomBytes, randomToken } from '../auth/crypto';
import { directory, type ApplicationRow } from '../durable/directory';
import { json, problems, raise } from '../errors';
import { endApplicationGrants } from '../oauth/application-grants';
import { isKnownScope, parseScopes } from '../oauth/scopes';
import { isRegistrableRedirectUri } from '../oauth/redirect-uri';
import { hashSecret } from '../store/tokens';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { createApiRouter } from './router';

export const CLIENT_SECRET_PREFIX = 'knock_cs_';

const NewApplicationSchema = z
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
  })
  .openapi('NewApplication');

const present = (a: ApplicationRow): Application => ({
  id: a.id,
  application_id: a.client_id,
  application_name: a.name,
  callback_url: a.redirect_uris.join('\n'),
  confidential: a.confidential,
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


export const applications = createApiRouter();
applications.use('*', requireAdmin);
applications
  .openapi(create, async (c) => {
    const input = bodyOf(c, NewApplicationSchema);
    const secret = input.confidential ? randomToken(CLIENT_SECRET_PREFIX) : null;
    const app = await directory(c.env).createApplication({
      clientId: hex(randomBytes(32)),
      secretHash: secret ? await hashSecret(c.env, secret) : null,
      name: input.name,
      redirectUris: input.redirect_uri,
      scopes: input.scopes,
      confidential: input.confidential,
      ownerId: c.var.caller.id,
    });
    return c.json({ ...present(app), secret }, 201);
  })
  .openapi(list, async (c) => c.json((await directory(c.env).listApplications()).map(present), 200))
  .openapi(remove, async (c) => {
    const clientId = await directory(c.env).deleteApplication(c.req.valid('param').id);
    if (!clientId) return raise(problems.notFound('Application'));
    await endApplicationGrants(c.env, clientId);
    return c.body(null, 204);
  });
