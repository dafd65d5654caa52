import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { isAccessLevel } from '../../shared/access-levels';
import { KINDS, mayCreateIn, VISIBILITIES, visibilityAllowedUnder, type Kind, type Visibility } from '../auth/policy';
import { publicOrigin } from '../config';
import { directory } from '../durable/directory';
import { namespaceObject } from '../durable/namespace';
import type { NamespaceRow } from '../durable/namespace-registry';
import { unwrap } from '../durable/result';
import type { AppEnv } from '../env';
import { json, problems, raise } from '../errors';
import { asSeenBy, findVisible, namespaceIdParam, parseNamespaceId } from './namespace-lookup';
import { offsetOf, paginationHeaders, paginationQuery } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { GroupSchema, presentGroup, presentProject, ProjectSchema } from './presenters/namespace';
import { createRouter } from './router';
import { USERNAME_PATTERN } from './users';

/** GitLab's path rule (as for usernames): letters, digits, `_`, `.`, `-`; no leading or trailing punctuation. */
const isValidPath = (p: string) => USERNAME_PATTERN.test(p) && !/\.(git|atom)$/i.test(p);
const pathParam = () => z.string().max(255).refine(isValidPath, { message: 'is invalid' });
const visibilityParam = () => z.enum(VISIBILITIES as [Visibility, ...Visibility[]]);
const minAccessLevelParam = () =>
  z.coerce.number().int().refine(isAccessLevel, { message: 'does not have a valid value' }).optional();

const NewGroupSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    path: pathParam(),
    parent_id: intParam().optional(),
    visibility: visibilityParam().default('private'),
    request_access_enabled: boolParam().default(true),
    description: z.string().max(2000).default(''),
  })
  .openapi('NewGroup');

const NewProjectSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    path: pathParam().optional(),
    namespace_id: z.union([z.number().int().min(1), z.string().min(1).max(2048)]).optional(),
    visibility: visibilityParam().default('private'),
    request_access_enabled: boolParam().default(true),
    description: z.string().max(2000).default(''),
  })
  .openapi('NewProject');

/** A project path from its name, as GitLab derives one ("My Site" → "my-site"). */
const slugify = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9_]+|[^a-z0-9_-]+$/g, '');

const visibilityNotAllowed = (visibility: string, parent: NamespaceRow) =>
  problems.badRequest({ visibility_level: [`${visibility} is not allowed since the namespace has ${parent.visibility} visibility`] });

/** Hands a new group or project to its own Durable Object, which records its creator as Owner. */
const initialize = async (c: Context<AppEnv>, kind: Kind, row: NamespaceRow) => {
  await namespaceObject(c.env, row.id).initialize({ id: row.id, kind: kind.name, creatorId: row.creator_id, createdAt: row.created_at });
};

const createGroup = createRoute({
  method: 'post',
  path: '/',
  tags: ['Groups'],
  summary: 'Create a group (a subgroup with parent_id needs Owner on the parent); the creator becomes Owner',
  request: { body: bodyContent(NewGroupSchema) },
  responses: { 201: { description: 'The group', content: { 'application/json': { schema: GroupSchema } } } },
});

const listGroups = createRoute({
  method: 'get',
  path: '/',
  tags: ['Groups'],
  summary: 'Groups the caller can see',
  request: {
    query: z.object({ min_access_level: minAccessLevelParam(), search: z.string().max(255).optional(), ...paginationQuery }),
  },
  responses: { 200: { description: 'Groups', content: { 'application/json': { schema: z.array(GroupSchema) } } } },
});

const getGroup = createRoute({
  method: 'get',
  path: '/{id}',
  tags: ['Groups'],
  summary: 'A group, by id or URL-encoded full path',
  request: { params: z.object({ id: namespaceIdParam() }) },
  responses: { 200: { description: 'The group', content: { 'application/json': { schema: GroupSchema } } } },
});

const createProject = createRoute({
  method: 'post',
  path: '/',
  tags: ['Projects'],
  summary: "Create a project in a group (needs Maintainer there) or in the caller's personal namespace; the creator becomes Owner",
  request: { body: bodyContent(NewProjectSchema) },
  responses: { 201: { description: 'The project', content: { 'application/json': { schema: ProjectSchema } } } },
});

const listProjects = createRoute({
  method: 'get',
  path: '/',
  tags: ['Projects'],
  summary: 'Projects the caller can see',
  request: {
    query: z.object({
      min_access_level: minAccessLevelParam(),
      membership: boolParam().optional(),
      search: z.string().max(255).optional(),
      ...paginationQuery,
    }),
  },
  responses: { 200: { description: 'Projects', content: { 'application/json': { schema: z.array(ProjectSchema) } } } },
});

const getProject = createRoute({
  method: 'get',
  path: '/{id}',
  tags: ['Projects'],
  summary: 'A project, by id or URL-encoded full path',
  request: { params: z.object({ id: namespaceIdParam() }) },
  responses: { 200: { description: 'The project', content: { 'application/json': { schema: ProjectSchema } } } },
});

export const groups = createRouter()
  .openapi(createGroup, async (c) => {
    const input = bodyOf(c, NewGroupSchema);
    const caller = c.var.caller;
    if (input.parent_id !== undefined) {
      const parent = await findVisible(c, KINDS.group, input.parent_id);
      if (!mayCreateIn(KINDS.group, parent.standing)) return raise(problems.forbidden());
      if (!visibilityAllowedUnder(input.visibility, parent.namespace.visibility)) return raise(visibilityNotAllowed(input.visibility, parent.namespace));
    }
    const row = unwrap(
      await directory(c.env).createNamespace({
        kind: 'group',
        name: input.name,
        path: input.path,
        parentId: input.parent_id ?? null,
        visibility: input.visibility,
        requestAccessEnabled: input.request_access_enabled,
        description: input.description,
        creatorId: caller.id,
      }),
    );
    await initialize(c, KINDS.group, row);
    return json(presentGroup(row, publicOrigin(c.env, c.req.url)), 201) as never;
  })
  .openapi(listGroups, async (c) => {
    const q = c.req.valid('query');
    const page = { page: q.page, perPage: q.per_page };
    const caller = c.var.caller;
    const { total, namespaces } = await directory(c.env).listNamespaces(
      'group',
      { userId: caller.id, admin: caller.admin, minAccessLevel: q.min_access_level, search: q.search },
      offsetOf(page),
      page.perPage,
    );
    const origin = publicOrigin(c.env, c.req.url);
    return json(namespaces.map((g) => presentGroup(g, origin)), 200, paginationHeaders(c, page, total)) as never;
  })
  .openapi(getGroup, async (c) => {
    const found = await findVisible(c, KINDS.group, c.req.valid('param').id);
    return json(presentGroup(found.namespace, publicOrigin(c.env, c.req.url))) as never;
  });

export const projects = createRouter()
  .openapi(createProject, async (c) => {
    const input = bodyOf(c, NewProjectSchema);
    const caller = c.var.caller;
    if (!input.name && !input.path) return raise(problems.invalidParam('name, path are missing, at least one parameter must be provided'));
    const path = input.path ?? slugify(input.name!);
    if (!isValidPath(path)) return raise(problems.badRequest({ path: ['is invalid'] }));
    const dir = directory(c.env);
    let parent: NamespaceRow;
    const ref = typeof input.namespace_id === 'string' ? parseNamespaceId(input.namespace_id) : input.namespace_id;
    const group = ref === undefined ? null : asSeenBy(caller, KINDS.group, await dir.resolveNamespace('group', ref, caller.id));
    if (group) {
      if (!mayCreateIn(KINDS.project, group.standing)) return raise(problems.forbidden());
      parent = group.namespace;
    } else {
      const personal = unwrap(await dir.ensureUserNamespace({ username: caller.username, name: caller.name }));
      const isPersonal =
        ref === undefined || ref === personal.id || (typeof ref === 'string' && ref.toLowerCase() === personal.full_path.toLowerCase());
      if (!isPersonal) return raise(problems.notFound('Namespace'));
      parent = personal;
    }
    if (!visibilityAllowedUnder(input.visibility, parent.visibility)) return raise(visibilityNotAllowed(input.visibility, parent));
    const row = unwrap(
      await dir.createNamespace({
        kind: 'project',
        name: input.name ?? path,
        path,
        parentId: parent.id,
        visibility: input.visibility,
        requestAccessEnabled: input.request_access_enabled,
        description: input.description,
        creatorId: caller.id,
      }),
    );
    await initialize(c, KINDS.project, row);
    return json(presentProject(row, publicOrigin(c.env, c.req.url)), 201) as never;
  })
  .openapi(listProjects, async (c) => {
    const q = c.req.valid('query');
    const page = { page: q.page, perPage: q.per_page };
    const caller = c.var.caller;
    const { total, namespaces } = await directory(c.env).listNamespaces(
      'project',
      { userId: caller.id, admin: caller.admin, minAccessLevel: q.min_access_level, membership: q.membership, search: q.search },
      offsetOf(page),
      page.perPage,
    );
    const origin = publicOrigin(c.env, c.req.url);
    return json(namespaces.map((p) => presentProject(p, origin)), 200, paginationHeaders(c, page, total)) as never;
  })
  .openapi(getProject, async (c) => {
    const found = await findVisible(c, KINDS.project, c.req.valid('param').id);
    return json(presentProject(found.namespace, publicOrigin(c.env, c.req.url))) as never;
  });
