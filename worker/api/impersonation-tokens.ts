import { createRoute, z } from '@hono/zod-openapi';
import { ImpersonationTokenSchema, ImpersonationTokenWithTokenSchema } from '../../shared/schemas';
import { requireAdmin } from '../auth/api-auth';
import * as tokens from '../services/access-tokens';
import { findUser } from '../services/users';
import { issueTokenFor, NewAccessTokenBody } from './access-tokens';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, intParam } from './params';
import { presentImpersonationToken } from './presenters/access-token';
import { createApiRouter } from './router';
import { raises } from './error-answers';

const KIND = tokens.TOKEN_KINDS.impersonation;
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
  request: { params: userParam, body: bodyContent(NewAccessTokenBody) },
  responses: { 201: { description: 'The token', content: { 'application/json': { schema: ImpersonationTokenWithTokenSchema } } } },
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
  responses: { 200: { description: 'Tokens', content: { 'application/json': { schema: z.array(ImpersonationTokenSchema) } } }, ...raises(403) },
});

const get = createRoute({
  method: 'get',
  path: '/{id}/impersonation_tokens/{token_id}',
  tags,
  summary: 'One impersonation token (administrators only)',
  middleware,
  request: { params: tokenParams },
  responses: { 200: { description: 'The token', content: { 'application/json': { schema: ImpersonationTokenSchema } } }, ...raises(403) },
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
 * GitLab's impersonation tokens: how an administrator (the demo seeder, tests, benchmarks) gets
 * a token for a user without the browser flow. Expires at 00:00 UTC of `expires_at` (default 30
 * days, at most 365). A user that does not exist is `404 User Not Found` on every route, before
 * any token is looked at (GitLab's lib/api/users.rb finds the user first).
 */
export const impersonationTokens = createApiRouter()
  .openapi(create, async (c) => {
    const issued = await issueTokenFor(c.env, c.req.valid('param').id, KIND, bodyOf(c, NewAccessTokenBody));
    return c.json({ ...presentImpersonationToken(issued.row), token: issued.token }, 201);
  })
  .openapi(list, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    const page = pageOf(q);
    const state = q.state === 'all' ? undefined : q.state;
    await findUser(c.env, id);
    const { total, tokens: rows } = await tokens.listAccessTokens(c.env, { userId: id, impersonation: true, state }, windowOf(page));
    return c.json(rows.map(presentImpersonationToken), 200, paginationHeaders(c, page, total));
  })
  .openapi(get, async (c) => {
    const { id, token_id } = c.req.valid('param');
    await findUser(c.env, id);
    return c.json(presentImpersonationToken(await tokens.findAccessToken(c.env, id, token_id, KIND)), 200);
  })
  .openapi(revoke, async (c) => {
    const { id, token_id } = c.req.valid('param');
    await findUser(c.env, id);
    await tokens.revokeAccessToken(c.env, await tokens.findAccessToken(c.env, id, token_id, KIND));
    return c.body(null, 204);
  });
