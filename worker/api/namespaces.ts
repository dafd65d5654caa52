import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { isAccessLevel } from '../../shared/access-levels';
import type { Group, Project, Visibility } from '../../shared/api-types';
import { GroupSchema, ProjectSchema, VisibilitySchema } from '../../shared/schemas';
import { KINDS, mayCreateIn, visibilityAllowedUnder, type Kind } from '../auth/policy';
import { publicOrigin } from '../config';
import type { ListFilter, NamespaceRow } from '../durable/namespace-registry';
import type { ApiEnv } from '../env';
import { ApiError, problems, raise, type Problem } from '../errors';
import * as service from '../services/namespaces';
import { namespaceIdParam, parseNamespaceId, withNamespace } from '../services/finder';
import { pageOf, paginationHeaders, paginationQuery, windowOf } from './pagination';
import { bodyContent, bodyOf, boolParam, intParam } from './params';
import { presentGroup, presentProject } from './presenters/namespace';
import { createApiRouter } from './router';
import { USERNAME_PATTERN } from './users';
import { raises } from './error-answers';

/** GitLab's path rule (as for usernames): letters, digits, `_`, `.`, `-`; no leading or trailing punctuation. */
const isValidPath = (p: string) => USERNAME_PATTERN.test(p) && !/\.(git|atom)$/i.test(p);
const pathParam = () => z.string().max(255).refine(isValidPath, { message: 'is invalid' });
const minAccessLevelParam = () =>
  z.coerce.number().int().refine(isAccessLevel, { message: 'does not have a valid value' }).optional();

/** What a new group or project shares: GitLab's `POST /groups` and `POST /projects` parameters. */
const newNamespaceFields = {
  visibility: VisibilitySchema.default('private'),
  request_access_enabled: boolParam().default(true),
  description: z.string().max(2000).default(''),
};

/** Creation parameters of either kind, as the routes below read them. */
interface NewNamespaceInput {
  name?: string;
  path?: string;
  /** The group (or, for a project, personal namespace) to create it in. */
  parent?: number | string;
  visibility: Visibility;
  request_access_enabled: boolean;
  require_two_factor_authentication?: boolean;
  description: string;
}

const NewGroupSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    path: pathParam(),
    parent_id: intParam().optional(),
    require_two_factor_authentication: boolParam().default(false),
    ...newNamespaceFields,
  })
  .openapi('NewGroup')
  .transform(({ parent_id, ...rest }): NewNamespaceInput => ({ ...rest, parent: parent_id }));

const NewProjectSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    path: pathParam().optional(),
    namespace_id: z.union([z.number().int().min(1), z.string().min(1).max(2048)]).optional(),
    ...newNamespaceFields,
  })
  .openapi('NewProject')
  .transform(({ namespace_id, ...rest }): NewNamespaceInput => ({ ...rest, parent: namespace_id }));

/**
 * `PUT /groups/:id` and `PUT /projects/:id` (GitLab's update parameters that Knock has): only
 * the fields given change.
 */
export const NamespaceChangesSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    path: pathParam().optional(),
    description: z.string().max(2000).optional(),
    visibility: VisibilitySchema.optional(),
    request_access_enabled: boolParam().optional(),
    /** Groups only (GitLab's group setting); a project ignores it. */
    require_two_factor_authentication: boolParam().optional(),
  })
  .openapi('NamespaceChanges');

/** GitLab answers a deletion it has accepted (deletion is asynchronous there) with 202 and this body. */
const AcceptedSchema = z.object({ message: z.string() }).openapi('Accepted');

const GroupListQuery = z.object({ min_access_level: minAccessLevelParam(), search: z.string().max(255).optional(), ...paginationQuery });
const ProjectListQuery = GroupListQuery.extend({ membership: boolParam().optional() });

/** A project path from its name, as GitLab derives one ("My Site" → "my-site"). */
const slugify = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9_]+|[^a-z0-9_-]+$/g, '');

/** Where a new group or project goes, and its name and path. */
interface Placement {
  parent: NamespaceRow | null;
  name: string;
  path: string;
}

/**
 * What differs between `/groups` and `/projects`: the entity's schema and presenter, the
 * creation parameters and where they place the new one, and the list filters. The routes below
 * are written once and read these fields.
 */
interface NamespaceApi {
  kind: Kind;
  schema: typeof GroupSchema | typeof ProjectSchema;
  present: (row: NamespaceRow, origin: string) => Group | Project;
  newSchema: typeof NewGroupSchema | typeof NewProjectSchema;
  place: (c: Context<ApiEnv>, input: NewNamespaceInput) => Promise<Placement>;
  listQuery: typeof GroupListQuery | typeof ProjectListQuery;
  createSummary: string;
}

/** A group the caller may see (else `notFound`) and create this kind in (else 403). */
const parentGroup = async (c: Context<ApiEnv>, kind: Kind, ref: string | number, notFound: Problem): Promise<NamespaceRow> => {
  const found = await withNamespace(c, KINDS.group, ref, async (target) => ({
    standing: await service.standingOn(c.env, target),
    row: await service.describe(c.env, KINDS.group, target),
  })).catch((e) => (e instanceof ApiError && e.status === 404 ? raise(notFound) : Promise.reject(e)));
  if (!mayCreateIn(kind, found.standing)) return raise(problems.forbidden());
  return found.row;
};

const GROUPS: NamespaceApi = {
  kind: KINDS.group,
  schema: GroupSchema,
  present: presentGroup,
  newSchema: NewGroupSchema,
  place: async (c, input) => ({
    parent: input.parent === undefined ? null : await parentGroup(c, KINDS.group, input.parent, KINDS.group.notFound()),
    name: input.name ?? '',
    path: input.path ?? '',
  }),
  listQuery: GroupListQuery,
  createSummary: 'Create a group (a subgroup with parent_id needs Owner on the parent); the creator becomes Owner',
};

const PROJECTS: NamespaceApi = {
  kind: KINDS.project,
  schema: ProjectSchema,
  present: presentProject,
  newSchema: NewProjectSchema,
  place: async (c, input) => {
    if (!input.name && !input.path) return raise(problems.invalidParam('name, path are missing, at least one parameter must be provided'));
    const path = input.path ?? slugify(input.name ?? '');
    if (!isValidPath(path)) return raise(problems.badRequest({ path: ['is invalid'] }));
    const name = input.name ?? path;
    // In the caller's personal namespace (`/username`) unless a group is named; GitLab's wording
    // for a group that is neither visible nor theirs.
    const ref = input.parent === undefined ? undefined : parseNamespaceId(input.parent);
    const personal = await service.personalNamespace(c.env, c.var.caller);
    const isPersonal = ref === undefined || ref === personal.id || (typeof ref === 'string' && ref.toLowerCase() === personal.full_path.toLowerCase());
    if (isPersonal) return { parent: personal, name, path };
    return { parent: await parentGroup(c, KINDS.project, ref, problems.notFound('Namespace')), name, path };
  },
  listQuery: ProjectListQuery,
  createSummary: "Create a project in a group (needs Maintainer there) or in the caller's personal namespace; the creator becomes Owner",
};

const visibilityNotAllowed = (visibility: Visibility, parent: NamespaceRow) =>
  problems.badRequest({ visibility_level: [`${visibility} is not allowed since the namespace has ${parent.visibility} visibility`] });

/** `POST`, `GET` (list), `GET`, `PUT` and `DELETE /:id` of groups or projects, defined once (GitLab's REST v4 shapes). */
const namespaceRoutes = (api: NamespaceApi) => {
  const { kind } = api;
  const tags = [`${kind.label}s`];
  const entity = { 'application/json': { schema: api.schema } };

  const create = createRoute({
    method: 'post',
    path: '/',
    tags,
    summary: api.createSummary,
    request: { body: bodyContent(api.newSchema) },
    // The parent group (or namespace) named is not found.
    responses: { 201: { description: `The ${kind.name}`, content: entity }, ...raises(404) },
  });

  const list = createRoute({
    method: 'get',
    path: '/',
    tags,
    summary: `${kind.label}s the caller can see`,
    request: { query: api.listQuery },
    responses: { 200: { description: `${kind.label}s`, content: { 'application/json': { schema: z.array(api.schema) } } } },
  });

  const get = createRoute({
    method: 'get',
    path: '/{id}',
    tags,
    summary: `A ${kind.name}, by id or URL-encoded full path`,
    request: { params: z.object({ id: namespaceIdParam() }) },
    responses: { 200: { description: `The ${kind.name}`, content: entity } },
  });

  const update = createRoute({
    method: 'put',
    path: '/{id}',
    tags,
    summary: `Change a ${kind.name}'s name, path, description, visibility or request_access_enabled${kind.name === 'group' ? ', require_two_factor_authentication' : ''}`,
    request: { params: z.object({ id: namespaceIdParam() }), body: bodyContent(NamespaceChangesSchema) },
    responses: { 200: { description: `The ${kind.name}, changed`, content: entity } },
  });

  const remove = createRoute({
    method: 'delete',
    path: '/{id}',
    tags,
    summary: `Delete a ${kind.name} (Owner), with its members and pending requests; a group must have no subgroups or projects left`,
    request: { params: z.object({ id: namespaceIdParam() }) },
    responses: { 202: { description: 'Deleted', content: { 'application/json': { schema: AcceptedSchema } } } },
  });

  return createApiRouter()
    .openapi(create, async (c) => {
      const input = bodyOf(c, api.newSchema);
      const { parent, name, path } = await api.place(c, input);
      if (parent && !visibilityAllowedUnder(input.visibility, parent.visibility)) return raise(visibilityNotAllowed(input.visibility, parent));
      const row = await service.createNamespace(c.env, {
        kind: kind.name,
        name,
        path,
        parentId: parent?.id ?? null,
        visibility: input.visibility,
        requestAccessEnabled: input.request_access_enabled,
        requireTwoFactor: input.require_two_factor_authentication,
        description: input.description,
        creatorId: c.var.caller.id,
      });
      return c.json(api.present(row, publicOrigin(c.env, c.req.url)), 201);
    })
    .openapi(list, async (c) => {
      const q = c.req.valid('query');
      const page = pageOf(q);
      const caller = c.var.caller;
      const filter: ListFilter = {
        userId: caller.id,
        admin: caller.admin,
        minAccessLevel: q.min_access_level,
        search: q.search,
        membership: 'membership' in q ? q.membership : undefined,
      };
      const { total, namespaces } = await service.listNamespaces(c.env, kind, filter, windowOf(page));
      const origin = publicOrigin(c.env, c.req.url);
      return c.json(namespaces.map((row) => api.present(row, origin)), 200, paginationHeaders(c, page, total));
    })
    .openapi(get, async (c) => {
      const row = await withNamespace(c, kind, c.req.valid('param').id, async (target) => {
        await service.assertVisible(c.env, target);
        return service.describe(c.env, kind, target);
      });
      return c.json(api.present(row, publicOrigin(c.env, c.req.url)), 200);
    })
    .openapi(update, async (c) => {
      const changes = bodyOf(c, NamespaceChangesSchema);
      const row = await withNamespace(c, kind, c.req.valid('param').id, (target) => service.updateNamespace(c.env, kind, target, changes));
      return c.json(api.present(row, publicOrigin(c.env, c.req.url)), 200);
    })
    .openapi(remove, async (c) => {
      await withNamespace(c, kind, c.req.valid('param').id, (target) => service.deleteNamespace(c.env, kind, target));
      return c.json({ message: '202 Accepted' }, 202);
    });
};

export const groups = namespaceRoutes(GROUPS);
export const projects = namespaceRoutes(PROJECTS);
