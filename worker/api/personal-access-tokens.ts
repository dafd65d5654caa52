import { createRoute, z } from '@hono/zod-openapi';
import { PersonalAccessTokenSchema, PersonalAccessTokenWithTokenSchema } from '../../shared/schemas';
import { requireAdmin } from '../auth/api-auth';
import { mayManageToken } from '../auth/policy';
import type { Caller, Env } from '../env';
import { startOfDay } from '../dates';
import { problems, raise } from '../errors';
import * as tokens from '../services/access-tokens';
import { findUser } from '../services/users';
import { issueTokenFor, NewAccessTokenBody } from './access-tokens';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, boolParam, dateParam, instantParam, intParam } from './params';
import { presentPersonalAccessToken } from './presenters/access-token';
import { createApiRouter } from './router';

const KIND = tokens.TOKEN_KINDS.personal;
const tags = ['Personal access tokens'];
const created = { 201: { description: 'The token, shown this once', content: { 'application/json': { schema: PersonalAccessTokenWithTokenSchema } } } };
const one = { 200: { description: 'The token', content: { 'application/json': { schema: PersonalAccessTokenSchema } } } };

/** A date whose 00:00 UTC bounds token expiry, in epoch seconds. */
const dateBoundParam = () => dateParam().transform((v) => startOfDay(v) / 1000);

const createForCaller = createRoute({
  method: 'post',
  path: '/user/personal_access_tokens',
  tags,
  summary: 'Create a personal access token for the caller; the token is shown once',
  description: "Beyond GitLab (which limits this route to the `k8s_proxy` scope): any of Knock's scopes, a name and an expiry date.",
  request: { body: bodyContent(NewAccessTokenBody) },
  responses: created,
});

const createForUser = createRoute({
  method: 'post',
  path: '/users/{id}/personal_access_tokens',
  tags,
  summary: 'Create a personal access token for a user (administrators only); the token is shown once',
  middleware: requireAdmin,
  request: { params: z.object({ id: intParam() }), body: bodyContent(NewAccessTokenBody) },
  responses: { ...created, 404: { description: '404 User Not Found' } },
});

const list = createRoute({
  method: 'get',
  path: '/personal_access_tokens',
  tags,
  summary: "The caller's personal access tokens, newest first; an administrator sees everyone's, or one user's with user_id",
  request: {
    query: z.object({
      user_id: intParam().optional(),
      state: z.enum(['active', 'inactive']).optional(),
      revoked: boolParam().optional(),
      search: z.string().max(255).optional(),
      created_before: instantParam().optional(),
      created_after: instantParam().optional(),
      last_used_before: instantParam().optional(),
      last_used_after: instantParam().optional(),
      expires_before: dateBoundParam().optional(),
      expires_after: dateBoundParam().optional(),
      ...paginationQuery,
    }),
  },
  responses: {
    200: { description: 'Tokens', content: { 'application/json': { schema: z.array(PersonalAccessTokenSchema) } } },
    401: { description: "A user_id other than the caller's, from someone who is not an administrator" },
    404: { description: 'No user has that user_id (administrators)' },
  },
});

const getSelf = createRoute({
  method: 'get',
  path: '/personal_access_tokens/self',
  tags,
  summary: 'The personal access token this request is made with (any scope)',
  responses: { ...one, 400: { description: 'Not made with a personal access token' } },
});

const revokeSelf = createRoute({
  method: 'delete',
  path: '/personal_access_tokens/self',
  tags,
  summary: 'Revoke the personal access token this request is made with (any scope); it stops working at once',
  responses: { 204: { description: 'Revoked' }, 400: { description: 'Not made with a personal access token, or an impersonation token' } },
});

const tokenParam = z.object({ id: intParam() });

const get = createRoute({
  method: 'get',
  path: '/personal_access_tokens/{id}',
  tags,
  summary: "One personal access token: the caller's own, or anyone's for an administrator",
  request: { params: tokenParam },
  responses: { ...one, 401: { description: "Someone else's token, or none (not an administrator)" }, 404: { description: 'No such token (administrators)' } },
});

const revoke = createRoute({
  method: 'delete',
  path: '/personal_access_tokens/{id}',
  tags,
  summary: "Revoke a personal access token: the caller's own, or anyone's for an administrator; it stops working at once",
  request: { params: tokenParam },
  responses: { 204: { description: 'Revoked' }, 400: { description: "Someone else's token" }, 404: { description: 'No such token' } },
});

const notPersonal = () => problems.badRequest('400 Bad request - This endpoint requires token type to be a personal access token');
const notPermitted = () => problems.badRequest('400 Bad request');

/** The token a request is made with, when it is a personal access token or an impersonation token. */
const presented = async (env: Env, caller: Caller) => {
  const row = caller.tokenId === null ? null : await tokens.getAccessToken(env, caller.tokenId);
  return row ?? raise(notPersonal());
};

/**
 * GitLab's personal access tokens API (`/personal_access_tokens`, `/users/:id/personal_access_tokens`,
 * `/user/personal_access_tokens`). They are the Directory's access tokens without the
 * impersonation flag, issued, listed and revoked by the same code as impersonation tokens.
 * Answers follow GitLab's: another user's token is 401 to read and 400 to revoke, and only an
 * administrator learns that an id does not exist.
 */
export const personalAccessTokens = createApiRouter()
  .openapi(createForCaller, async (c) => {
    const issued = await issueTokenFor(c.env, c.var.caller.id, KIND, bodyOf(c, NewAccessTokenBody));
    return c.json({ ...presentPersonalAccessToken(issued.row), token: issued.token }, 201);
  })
  .openapi(createForUser, async (c) => {
    const issued = await issueTokenFor(c.env, c.req.valid('param').id, KIND, bodyOf(c, NewAccessTokenBody));
    return c.json({ ...presentPersonalAccessToken(issued.row), token: issued.token }, 201);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid('query');
    const caller = c.var.caller;
    const page = pageOf(q);
    let owner: { userId?: number; impersonation?: boolean };
    if (caller.admin) {
      if (q.user_id !== undefined) await findUser(c.env, q.user_id);
      owner = { userId: q.user_id };
    } else {
      if (q.user_id !== undefined && q.user_id !== caller.id) return raise(problems.unauthorized());
      owner = { userId: caller.id, impersonation: false };
    }
    const filter = {
      ...owner,
      state: q.state,
      revoked: q.revoked,
      search: q.search,
      createdBefore: q.created_before,
      createdAfter: q.created_after,
      lastUsedBefore: q.last_used_before,
      lastUsedAfter: q.last_used_after,
      expiresBefore: q.expires_before,
      expiresAfter: q.expires_after,
    };
    const { total, tokens: rows } = await tokens.listAccessTokens(c.env, filter, windowOf(page));
    return c.json(rows.map(presentPersonalAccessToken), 200, paginationHeaders(c, page, total));
  })
  .openapi(getSelf, async (c) => c.json(presentPersonalAccessToken(await presented(c.env, c.var.caller)), 200))
  .openapi(revokeSelf, async (c) => {
    const token = await presented(c.env, c.var.caller);
    if (!mayManageToken(c.var.caller, token)) return raise(notPermitted());
    await tokens.revokeAccessToken(c.env, token);
    return c.body(null, 204);
  })
  .openapi(get, async (c) => {
    const caller = c.var.caller;
    const token = await tokens.getAccessToken(c.env, c.req.valid('param').id);
    if (token && mayManageToken(caller, token)) return c.json(presentPersonalAccessToken(token), 200);
    return raise(caller.admin ? problems.notFound(KIND.label) : problems.unauthorized());
  })
  .openapi(revoke, async (c) => {
    const token = (await tokens.getAccessToken(c.env, c.req.valid('param').id)) ?? raise(problems.notFound(KIND.label));
    if (!mayManageToken(c.var.caller, token)) return raise(notPermitted());
    await tokens.revokeAccessToken(c.env, token);
    return c.body(null, 204);
  });
