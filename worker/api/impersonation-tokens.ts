import { createRoute, z } from '@hono/zod-openapi';
import { AccessTokenSchema, NewAccessTokenSchema } from '../../shared/schemas';
import { requireAdmin } from '../auth/api-auth';
import { epochSeconds } from '../clock';
import { directory } from '../durable/directory';
import type { Env } from '../env';
import { problems, raise } from '../errors';
import { isKnownScope, parseScopes } from '../oauth/scopes';
import * as tokens from '../services/access-tokens';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, intParam } from './params';
import { presentAccessToken } from './presenters/access-token';
import { createApiRouter } from './router';

const DAY = 24 * 3600;
const DEFAULT_LIFETIME_DAYS = 30;
const MAX_LIFETIME_DAYS = 365;

export const NewImpersonationToken = z
  .object({
    name: z.string().trim().min(1).max(255),
    scopes: z
      .union([z.array(z.string()), z.string()])
      .transform((v) => (Array.isArray(v) ? [...new Set(v)] : parseScopes(v)))
      .refine((s) => s.length > 0 && s.every(isKnownScope), { message: 'does not have a valid value' }),
    expires_at: z.iso.date().optional(),
  })
  .openapi('NewImpersonationToken');

const userParam = z.object({ id: intParam() });
const tokenParams = z.object({ id: intParam(), token_id: intParam() });
const tags = ['Users'];
const middleware = requireAdmin;

const create = createRoute({
  method: 'post',
  path: '/{id}/impersonation_tokens',
  tags,
  summary: 'Issue an access token for a user (administrators only); the token is shown once',
  middleware,
  request: { params: userParam, body: bodyContent(NewImpersonationToken) },
  responses: { 201: { description: 'The token', content: { 'application/json': { schema: NewAccessTokenSchema } } } },
});

const list = createRoute({
  method: 'get',
  path: '/{id}/impersonation_tokens',
  tags,
  summary: "A user's impersonation tokens, newest first (administrators only)",
  middleware,
  request: {
    params: userParam,
    query: z.object({ state: z.enum(['all', 'active', 'inactive']).default('all'), ...paginationQuery }),
  },
  responses: { 200: { description: 'Tokens', content: { 'application/json': { schema: z.array(AccessTokenSchema) } } } },
});

const get = createRoute({
  method: 'get',
  path: '/{id}/impersonation_tokens/{token_id}',
  tags,
  summary: 'One impersonation token (administrators only)',
  middleware,
  request: { params: tokenParams },
  responses: { 200: { description: 'The token', content: { 'application/json': { schema: AccessTokenSchema } } } },
});

const revoke = createRoute({
  method: 'delete',
  path: '/{id}/impersonation_tokens/{token_id}',
  tags,
  summary: 'Revoke an impersonation token (administrators only); it stops working at once',
  middleware,
  request: { params: tokenParams },
  responses: { 204: { description: 'Revoked' } },
});

/**
 * Issues an impersonation token for an active user (the API's route and the administrators'
 * console): it expires at 00:00 UTC of `expires_at`, by default in 30 days, at most in 365.
 */
export const issueImpersonationToken = async (env: Env, userId: number, input: z.output<typeof NewImpersonationToken>) => {
  const now = epochSeconds();
  const expiresAt = input.expires_at ? Date.parse(`${input.expires_at}T00:00:00Z`) / 1000 : now + DEFAULT_LIFETIME_DAYS * DAY;
  if (expiresAt <= now || expiresAt > now + MAX_LIFETIME_DAYS * DAY) return raise(problems.invalidParam('expires_at is invalid'));
  const user = await directory(env).getUser(userId);
  if (!user || user.state !== 'active') return raise(problems.notFound('User'));
  return tokens.issueAccessToken(env, user, { name: input.name, scopes: input.scopes, expiresAt, impersonation: true });
};

/**
 * GitLab's impersonation tokens: how an administrator (the demo seeder, tests, benchmarks) gets
 * a token for a user without the browser flow. Expires at 00:00 UTC of `expires_at` (default 30
 * days, at most 365).
 */
export const impersonationTokens = createApiRouter()
  .openapi(create, async (c) => {
    const issued = await issueImpersonationToken(c.env, c.req.valid('param').id, bodyOf(c, NewImpersonationToken));
    return c.json({ ...presentAccessToken(issued.row), token: issued.token }, 201);
  })
  .openapi(list, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    const page = pageOf(q);
    const active = q.state === 'all' ? undefined : q.state === 'active';
    const { total, tokens: rows } = await tokens.listAccessTokens(c.env, { userId: id, impersonation: true, active }, windowOf(page));
    return c.json(rows.map(presentAccessToken), 200, paginationHeaders(c, page, total));
  })
  .openapi(get, async (c) => {
    const { id, token_id } = c.req.valid('param');
    return c.json(presentAccessToken(await tokens.findAccessToken(c.env, id, token_id, true)), 200);
  })
  .openapi(revoke, async (c) => {
    const { id, token_id } = c.req.valid('param');
    await tokens.revokeAccessToken(c.env, await tokens.findAccessToken(c.env, id, token_id, true));
    return c.body(null, 204);
  });
