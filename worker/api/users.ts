import { createRoute, z } from '@hono/zod-openapi';
import { requireAdmin } from '../auth/api-auth';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory/directory';
import { unwrap } from '../durable/result';
import type { StateAction } from '../durable/user-lifecycle';
import { createAccount } from '../services/accounts';
import * as service from '../services/users';
import { resetTwoFactor } from '../services/two-factor';
import { offsetOf, paginationHeaders, paginationQuery } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { presentUser, presentUserBasic, UserBasicSchema, UserSchema } from './presenters/user';
import { createApiRouter } from './router';
import { raises } from './error-answers';

/** GitLab's username rule: letters, digits, `_`, `.`, `-`; no leading or trailing punctuation. */
export const USERNAME_PATTERN = /^[a-zA-Z0-9_](?:[a-zA-Z0-9_.-]{0,253}[a-zA-Z0-9_-])?$/;

export const NewUserSchema = z
  .object({
    username: z.string().regex(USERNAME_PATTERN).refine((u) => !/\.(git|atom)$/i.test(u)),
    name: z.string().trim().min(1).max(255),
    password: z.string().min(8).max(128),
    email: z.email().max(255).optional(),
    admin: boolParam().optional(),
  })
  .openapi('NewUser');

const createUser = createRoute({
  method: 'post',
  path: '/',
  summary: 'Create a user (administrators only)',
  middleware: [requireAdmin] as const,
  request: { body: bodyContent(NewUserSchema) },
  responses: {
    201: { description: 'The user', content: { 'application/json': { schema: UserSchema } } },
    409: { description: 'Username or email already taken' },
    ...raises(503),
  },
});

const listUsers = createRoute({
  method: 'get',
  path: '/',
  summary: 'List users, or find one by username',
  request: {
    query: z.object({
      username: z.string().optional(),
      search: z.string().max(255).optional(),
      active: boolParam().optional(),
      blocked: boolParam().optional(),
      ...paginationQuery,
    }),
  },
  responses: { 200: { description: 'Users', content: { 'application/json': { schema: z.array(UserBasicSchema) } } } },
});

const getUser = createRoute({
  method: 'get',
  path: '/{id}',
  summary: 'A single user',
  request: { params: z.object({ id: intParam() }) },
  responses: {
    200: { description: 'The user', content: { 'application/json': { schema: UserSchema } } },
    404: { description: '404 User Not Found' },
  },
});

/** `PUT /users/:id`: GitLab's fields that Knock stores; unknown fields are ignored, as GitLab does. */
export const UserEditSchema = z
  .object({
    username: NewUserSchema.shape.username.optional(),
    name: NewUserSchema.shape.name.optional(),
    email: z.email().max(255).optional(),
    password: NewUserSchema.shape.password.optional(),
    admin: boolParam().optional(),
  })
  .openapi('UserEdit');

const tags = ['Users'];
const idParam = z.object({ id: intParam() });

const updateUser = createRoute({
  method: 'put',
  path: '/{id}',
  tags,
  summary: 'Change a user (administrators only): username, name, email, password, administrator flag',
  middleware: [requireAdmin] as const,
  request: { params: idParam, body: bodyContent(UserEditSchema) },
  responses: {
    200: { description: 'The user', content: { 'application/json': { schema: UserSchema } } },
    404: { description: '404 User Not Found' },
    409: { description: 'Username or email already taken' },
    ...raises(503),
  },
});

/** GitLab answers these with 201 and a bare JSON value: `true`, `false` when there was nothing to undo, `null` when already done. */
const StateAnswer = z.boolean().nullable().openapi('UserStateAnswer');

const stateRoute = (action: StateAction, summary: string) =>
  createRoute({
    method: 'post',
    path: `/{id}/${action}`,
    tags,
    summary,
    middleware: [requireAdmin] as const,
    request: { params: idParam },
    responses: {
      201: { description: "GitLab's answer", content: { 'application/json': { schema: StateAnswer } } },
      403: { description: 'Not allowed in the user\'s state, or on yourself or the built-in administrator' },
      404: { description: '404 User Not Found' },
      ...raises(503),
    },
  });

const deleteUser = createRoute({
  method: 'delete',
  path: '/{id}',
  tags,
  summary: 'Delete a user (administrators only), with their memberships, pending requests, tokens and personal projects',
  middleware: [requireAdmin] as const,
  request: { params: idParam, query: z.object({ hard_delete: boolParam().optional() }) },
  responses: {
    204: { description: 'Deleted' },
    404: { description: '404 User Not Found' },
    409: { description: 'The user is the only Owner of a group' },
    ...raises(503),
  },
});

const disableTwoFactor = createRoute({
  method: 'patch',
  path: '/{id}/disable_two_factor',
  tags,
  summary: "Disable a user's two-factor authentication (administrators only; not for administrators)",
  middleware: [requireAdmin] as const,
  request: { params: idParam },
  responses: {
    204: { description: 'Every second factor and recovery code of the user removed' },
    400: { description: 'Two-factor authentication is not enabled for this user' },
    403: { description: 'The user is an administrator' },
    404: { description: '404 User Not Found' },
  },
});

const STATE_ROUTES: [StateAction, string][] = [
  ['block', 'Block a user (administrators only): they can no longer sign in, refresh or use any token'],
  ['unblock', 'Unblock a blocked user (administrators only); their ended tokens stay ended'],
  ['deactivate', 'Deactivate a user (administrators only): like blocking, undone with activate'],
  ['activate', 'Activate a deactivated user (administrators only)'],
];

export const users = createApiRouter()
  .openapi(createUser, async (c) => {
    const input = bodyOf(c, NewUserSchema);
    const user = unwrap(await createAccount(c.env, input));
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), true), 201);
  })
  .openapi(listUsers, async (c) => {
    const q = c.req.valid('query');
    const page = { page: q.page, perPage: q.per_page };
    const { total, users: rows } = await directory(c.env).listUsers(
      { username: q.username, search: q.search, withPrivateEmails: c.var.caller.admin, state: q.blocked ? 'blocked' : q.active ? 'active' : undefined },
      offsetOf(page),
      page.perPage,
    );
    const origin = publicOrigin(c.env, c.req.url);
    return c.json(rows.map((u) => presentUserBasic(u, origin)), 200, paginationHeaders(c, page, total));
  })
  .openapi(getUser, async (c) => {
    const { id } = c.req.valid('param');
    const user = await service.findUser(c.env, id);
    const caller = c.var.caller;
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), caller.admin || caller.id === user.id), 200);
  })
  .openapi(updateUser, async (c) => {
    const user = await service.updateUser(c.env, c.req.valid('param').id, bodyOf(c, UserEditSchema));
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), true), 200);
  })
  .openapi(deleteUser, async (c) => {
    await service.deleteUser(c.env, c.req.valid('param').id);
    return c.body(null, 204);
  })
  .openapi(disableTwoFactor, async (c) => {
    await resetTwoFactor(c.env, c.req.valid('param').id, { adminsToo: false });
    return c.body(null, 204);
  });

// GitLab's user moderation API: the four state changes, written once.
for (const [action, summary] of STATE_ROUTES) {
  users.openapi(stateRoute(action, summary), async (c) => c.json(await service.changeUserState(c.env, c.req.valid('param').id, action, c.var.caller), 201));
}
