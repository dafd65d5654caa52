import { createRoute, z } from '@hono/zod-openapi';
import { requireAdmin } from '../auth/api-auth';
import { hashPassword } from '../auth/crypto';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory';
import { unwrap } from '../durable/result';
import { json, problems, raise } from '../errors';
import { offsetOf, paginationHeaders, paginationQuery } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { presentUser, presentUserBasic, UserBasicSchema, UserSchema } from './presenters/user';
import { createApiRouter } from './router';

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
  },
});

const listUsers = createRoute({
  method: 'get',
  path: '/',
  summary: 'List users, or find one by username',
  request: {
    query: z.object({ username: z.string().optional(), search: z.string().max(255).optional(), ...paginationQuery }),
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

export const users = createApiRouter()
  .openapi(createUser, async (c) => {
    const input = bodyOf(c, NewUserSchema);
    const user = unwrap(
      await directory(c.env).createUser({
        username: input.username,
        name: input.name,
        email: input.email ?? null,
        passwordHash: await hashPassword(input.password),
        admin: input.admin ?? false,
      }),
    );
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), true), 201);
  })
  .openapi(listUsers, async (c) => {
    const q = c.req.valid('query');
    const page = { page: q.page, perPage: q.per_page };
    const { total, users: rows } = await directory(c.env).listUsers({ username: q.username, search: q.search }, offsetOf(page), page.perPage);
    const origin = publicOrigin(c.env, c.req.url);
    return c.json(rows.map((u) => presentUserBasic(u, origin)), 200, paginationHeaders(c, page, total));
  })
  .openapi(getUser, async (c) => {
    const { id } = c.req.valid('param');
    const user = await directory(c.env).getUser(id);
    if (!user) return raise(problems.notFound('User'));
    const caller = c.var.caller;
    return c.json(presentUser(user, publicOrigin(c.env, c.req.url), caller.admin || caller.id === user.id), 200);
  });
