import { createRoute, z } from '@hono/zod-openapi';
import { requireAdmin } from '../auth/api-auth';
import { epochSeconds } from '../clock';
import { directory } from '../durable/directory';
import { json, problems, raise } from '../errors';
import { isKnownScope, parseScopes } from '../oauth/scopes';
import { accessTokenRecord, hashSecret, newAccessToken, putAccessToken } from '../store/tokens';
import { bodyContent, bodyOf, intParam } from './params';
import { createApiRouter } from './router';

const DAY = 24 * 3600;
const DEFAULT_LIFETIME_DAYS = 30;
const MAX_LIFETIME_DAYS = 365;

const NewImpersonationToken = z
  .object({
    name: z.string().trim().min(1).max(255),
    scopes: z
      .union([z.array(z.string()), z.string()])
      .transform((v) => (Array.isArray(v) ? [...new Set(v)] : parseScopes(v)))
      .refine((s) => s.length > 0 && s.every(isKnownScope), { message: 'does not have a valid value' }),
    expires_at: z.iso.date().optional(),
  })
  .openapi('NewImpersonationToken');

const ImpersonationToken = z
  .object({
    id: z.null(),
    name: z.string(),
    revoked: z.boolean(),
    created_at: z.string(),
    scopes: z.array(z.string()),
    user_id: z.number().int(),
    active: z.boolean(),
    expires_at: z.string(),
    impersonation: z.literal(true),
    token: z.string(),
  })
  .openapi('ImpersonationToken');

const create = createRoute({
  method: 'post',
  path: '/{id}/impersonation_tokens',
  tags: ['Users'],
  summary: 'Issue an access token for a user (administrators only); the token is shown once',
  middleware: [requireAdmin] as const,
  request: { params: z.object({ id: intParam() }), body: bodyContent(NewImpersonationToken) },
  responses: { 201: { description: 'The token', content: { 'application/json': { schema: ImpersonationToken } } } },
});

/**
 * GitLab's `POST /users/:id/impersonation_tokens`: how an administrator (the demo seeder, tests,
 * benchmarks) gets a token for a user without the browser flow. Expires at 00:00 UTC of
 * `expires_at` (default 30 days, at most 365). Stored in KV like any access token; not listed.
 */
export const impersonationTokens = createApiRouter().openapi(create, async (c) => {
  const { id } = c.req.valid('param');
  const input = bodyOf(c, NewImpersonationToken);
  const now = epochSeconds();
  const expiresAt = input.expires_at ? Date.parse(`${input.expires_at}T00:00:00Z`) / 1000 : now + DEFAULT_LIFETIME_DAYS * DAY;
  if (expiresAt <= now || expiresAt > now + MAX_LIFETIME_DAYS * DAY) return raise(problems.invalidParam('expires_at is invalid'));
  const user = await directory(c.env).getUser(id);
  if (!user || user.state !== 'active') return raise(problems.notFound('User'));
  const token = newAccessToken(expiresAt);
  await putAccessToken(
    c.env,
    await hashSecret(c.env, token),
    accessTokenRecord(user, { scopes: input.scopes, clientId: null, grantId: null, createdAt: now, expiresAt }),
  );
  return c.json(
    {
      id: null,
      name: input.name,
      revoked: false,
      created_at: new Date(now * 1000).toISOString(),
      scopes: input.scopes,
      user_id: user.id,
      active: true,
      expires_at: new Date(expiresAt * 1000).toISOString().slice(0, 10),
      impersonation: true,
      token,
    },
    201,
  );
});
