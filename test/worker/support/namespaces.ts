import { ADMIN, call, unique } from './http';

export type KindRoute = 'groups' | 'projects';
export const KIND_ROUTES: KindRoute[] = ['groups', 'projects'];

/** The console page of a group or project, its `web_url`: `/groups/acme`, or `/acme/website` for a project. */
export const pageOf = (kind: KindRoute, fullPath: string) => (kind === 'projects' ? `/${fullPath}` : `/groups/${fullPath}`);

/** A tab of a group's or project's pages, as GitLab addresses it. */
export const tabOf = (kind: KindRoute, fullPath: string, tab: 'members' | 'access_requests' | 'settings' | 'hooks' | 'audit_events') => {
  const members = `/-/${kind === 'groups' ? 'group' : 'project'}_members`;
  const suffix = { members, access_requests: `${members}?tab=access_requests`, settings: kind === 'groups' ? '/-/edit' : '/edit', hooks: '/-/hooks', audit_events: '/-/audit_events' }[tab];
  return `${pageOf(kind, fullPath)}${suffix}`;
};

export interface Person {
  id: number;
  username: string;
  name: string;
  headers: Record<string, string>;
}

const send = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> =>
  call(path, {
    method,
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A client of /api/v4 as one person (or anonymous with `{}`). */
export const as = (who: Pick<Person, 'headers'> | Record<string, string>) => {
  const headers = 'headers' in who ? (who.headers as Record<string, string>) : (who as Record<string, string>);
  return {
    get: (path: string) => send('GET', `/api/v4${path}`, headers),
    post: (path: string, body?: unknown) => send('POST', `/api/v4${path}`, headers, body),
    put: (path: string, body?: unknown) => send('PUT', `/api/v4${path}`, headers, body),
    delete: (path: string) => send('DELETE', `/api/v4${path}`, headers),
  };
};

export const admin = as(ADMIN);

/** A user created by the administrator, with a token from the impersonation-token route. */
export const person = async (prefix = 'u', opts: { admin?: boolean } = {}): Promise<Person> => {
  const username = unique(prefix);
  const created = await admin.post('/users', { username, name: `Name ${username}`, password: 'correct horse battery', admin: opts.admin ?? false });
  if (created.status !== 201) throw new Error(`create user: ${created.status} ${await created.text()}`);
  const user = (await created.json()) as { id: number };
  const issued = await admin.post(`/users/${user.id}/impersonation_tokens`, { name: 'test', scopes: ['api'] });
  if (issued.status !== 201) throw new Error(`token: ${issued.status} ${await issued.text()}`);
  const { token } = (await issued.json()) as { token: string };
  return { id: user.id, username, name: `Name ${username}`, headers: { 'PRIVATE-TOKEN': token } };
};

export interface Created {
  id: number;
  path: string;
  full_path: string;
  path_with_namespace?: string;
}

const expectCreated = async (res: Response): Promise<Created & Record<string, unknown>> => {
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return (await res.json()) as Created & Record<string, unknown>;
};

export const createGroup = async (owner: Person, body: Record<string, unknown> = {}) => {
  const path = unique('g');
  return expectCreated(await as(owner).post('/groups', { name: path, path, visibility: 'public', ...body }));
};

export const createProject = async (owner: Person, body: Record<string, unknown> = {}) => {
  const path = unique('p');
  const created = await expectCreated(await as(owner).post('/projects', { name: path, path, visibility: 'public', ...body }));
  return { ...created, full_path: created.path_with_namespace as string };
};

/**
 * A group or project owned by `owner`, for tests that run the same case on both kinds. Projects
 * live in a group of their own owner.
 */
export const createSource = async (kind: KindRoute, owner: Person, body: Record<string, unknown> = {}) => {
  if (kind === 'groups') return createGroup(owner, body);
  const group = await createGroup(owner);
  return createProject(owner, { namespace_id: group.id, ...body });
};

/** Like createSource, but always one level down: a subgroup, or a project in a group. */
export const createNestedSource = async (kind: KindRoute, owner: Person, body: Record<string, unknown> = {}) => {
  const group = await createGroup(owner);
  return kind === 'groups' ? createGroup(owner, { parent_id: group.id, ...body }) : createProject(owner, { namespace_id: group.id, ...body });
};

/** Adds `member` at `level` the way users get in: request, then approval by the administrator. */
export const addMember = async (kind: KindRoute, id: number, member: Person, level: number) => {
  const requested = await as(member).post(`/${kind}/${id}/access_requests`);
  if (requested.status !== 201) throw new Error(`request: ${requested.status} ${await requested.text()}`);
  const approved = await admin.put(`/${kind}/${id}/access_requests/${member.id}/approve?access_level=${level}`);
  if (approved.status !== 201) throw new Error(`approve: ${approved.status} ${await approved.text()}`);
};

/**
 * The first request of a test file starts the Worker, which takes seconds on a loaded machine;
 * `beforeAll(startWorker, 30_000)` keeps that out of the first test's time limit.
 */
export const startWorker = async () => {
  await admin.get('/version');
};
