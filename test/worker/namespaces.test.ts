import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, unique } from './support/http';
import { addMember, admin, as, createGroup, createProject, person, startWorker } from './support/namespaces';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(startWorker, 30_000);

describe('groups', () => {
  it('creates a group in GitLab shape; the creator is its Owner', async () => {
    const alice = await person('alice');
    const path = unique('acme');
    const res = await as(alice).post('/groups', { name: 'Acme Inc', path, visibility: 'public' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    const group = await res.json();
    expect(group).toEqual({
      id: expect.any(Number),
      web_url: `http://knock.test/groups/${path}`,
      name: 'Acme Inc',
      path,
      description: '',
      visibility: 'public',
      full_name: 'Acme Inc',
      full_path: path,
      parent_id: null,
      request_access_enabled: true,
      require_two_factor_authentication: false,
      avatar_url: null,
      created_at: expect.stringMatching(ISO_MS),
    });
    const members = await (await as(alice).get(`/groups/${(group as { id: number }).id}/members`)).json();
    expect(members).toEqual([
      {
        id: alice.id,
        username: alice.username,
        name: alice.name,
        state: 'active',
        locked: false,
        avatar_url: null,
        web_url: `http://knock.test/${alice.username}`,
        access_level: 50,
        created_at: expect.stringMatching(ISO_MS),
        expires_at: null,
      },
    ]);
  });

  it('defaults to private visibility; form bodies work too', async () => {
    const alice = await person('alice');
    const path = unique('frm');
    const res = await call('/api/v4/groups', {
      method: 'POST',
      headers: { ...alice.headers, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'Form', path, request_access_enabled: 'false' }).toString(),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ visibility: 'private', request_access_enabled: false });
  });

  it('creates subgroups for Owners of the parent only', async () => {
    const [owner, maintainer, stranger] = await Promise.all([person('own'), person('mnt'), person('str')]);
    const parent = await createGroup(owner);
    await addMember('groups', parent.id, maintainer, 40);
    const sub = await as(owner).post('/groups', { name: 'Sub', path: 'sub', parent_id: parent.id, visibility: 'public' });
    expect(sub.status).toBe(201);
    expect(await sub.json()).toMatchObject({ full_path: `${parent.full_path}/sub`, parent_id: parent.id, full_name: `${parent.path} / Sub` });
    expect((await as(maintainer).post('/groups', { name: 'x', path: 'x', parent_id: parent.id })).status).toBe(403);
    expect((await as(stranger).post('/groups', { name: 'y', path: 'y', parent_id: parent.id })).status).toBe(403);
    const hidden = await createGroup(owner, { visibility: 'private' });
    const res = await as(stranger).post('/groups', { name: 'z', path: 'z', parent_id: hidden.id });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: '404 Group Not Found' });
  });

  it('refuses bad and taken paths', async () => {
    const alice = await person('alice');
    const group = await createGroup(alice);
    const taken = await as(alice).post('/groups', { name: 'again', path: group.full_path.toUpperCase() });
    expect(taken.status).toBe(400);
    expect(await taken.json()).toEqual({ message: { path: ['has already been taken'] } });
    const asUser = await as(alice).post('/groups', { name: 'me', path: alice.username });
    expect(asUser.status).toBe(400);
    expect(await asUser.json()).toEqual({ message: { path: ['has already been taken'] } });
    for (const path of ['-lead', 'trail.', 'sp ace', 'a/b', 'x.git', '', '..']) {
      const res = await as(alice).post('/groups', { name: 'bad', path });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.stringMatching(/^path /) });
    }
    const reserved = await as(alice).post('/groups', { name: 'api', path: 'api' });
    expect(reserved.status).toBe(400);
    expect((await as(alice).post('/groups', { path: unique('n') })).status).toBe(400);
    expect(await (await as(alice).post('/groups', { name: 'v', path: unique('v'), visibility: 'secret' })).json()).toEqual({
      error: 'visibility does not have a valid value',
    });
  });

  it('keeps a subgroup no more visible than its parent', async () => {
    const alice = await person('alice');
    const parent = await createGroup(alice, { visibility: 'internal' });
    const res = await as(alice).post('/groups', { name: 's', path: 's', parent_id: parent.id, visibility: 'public' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ message: { visibility_level: [expect.any(String)] } });
  });

  it('lists the groups a caller can see, with search and pagination', async () => {
    const [alice, stranger] = await Promise.all([person('alice'), person('str')]);
    const tag = unique('lst');
    const open = await createGroup(alice, { name: `${tag} open`, path: `${tag}-open` });
    const hidden = await createGroup(alice, { name: `${tag} hidden`, path: `${tag}-hidden`, visibility: 'private' });
    const ids = async (who: Parameters<typeof as>[0], q: string) => ((await (await as(who).get(`/groups?${q}`)).json()) as { id: number }[]).map((g) => g.id);
    expect(await ids(alice, `search=${tag}`)).toEqual([open.id, hidden.id]);
    expect(await ids(stranger, `search=${tag}`)).toEqual([open.id]);
    expect(await ids(ADMIN, `search=${tag}`)).toEqual([open.id, hidden.id]);
    expect(await ids(stranger, `search=${tag}&min_access_level=10`)).toEqual([]);
    const page = await as(alice).get(`/groups?search=${tag}&per_page=1&page=2`);
    expect(await page.json()).toMatchObject([{ id: hidden.id }]);
    expect(page.headers.get('X-Total')).toBe('2');
    expect((await as(alice).get('/groups?min_access_level=33')).status).toBe(400);
  });
});

describe('projects', () => {
  it("creates a project in the creator's personal namespace by default", async () => {
    const alice = await person('alice');
    const res = await as(alice).post('/projects', { name: 'My Site', visibility: 'public' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      id: expect.any(Number),
      description: '',
      name: 'My Site',
      name_with_namespace: `${alice.name} / My Site`,
      path: 'my-site',
      path_with_namespace: `${alice.username}/my-site`,
      created_at: expect.stringMatching(ISO_MS),
      web_url: `http://knock.test/${alice.username}/my-site`,
      avatar_url: null,
      visibility: 'public',
      request_access_enabled: true,
      namespace: {
        id: expect.any(Number),
        name: alice.name,
        path: alice.username,
        kind: 'user',
        full_path: alice.username,
        parent_id: null,
        avatar_url: null,
        web_url: `http://knock.test/${alice.username}`,
      },
    });
  });

  it('creates a project in a group for its Maintainers and Owners only', async () => {
    const [owner, maintainer, developer] = await Promise.all([person('own'), person('mnt'), person('dev')]);
    const group = await createGroup(owner);
    await addMember('groups', group.id, maintainer, 40);
    await addMember('groups', group.id, developer, 30);
    const made = await as(maintainer).post('/projects', { name: 'website', namespace_id: group.id, visibility: 'public' });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({
      path_with_namespace: `${group.full_path}/website`,
      namespace: { id: group.id, kind: 'group', full_path: group.full_path, web_url: `http://knock.test/groups/${group.full_path}` },
    });
    expect((await as(developer).post('/projects', { name: 'nope', namespace_id: group.id })).status).toBe(403);
    const byPath = await as(owner).post('/projects', { path: 'by-path', namespace_id: group.full_path });
    expect(await byPath.json()).toMatchObject({ name: 'by-path', path_with_namespace: `${group.full_path}/by-path` });
    const missing = await as(owner).post('/projects', { name: 'x', namespace_id: 999999999 });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: '404 Namespace Not Found' });
    expect(await (await as(owner).post('/projects', {})).json()).toEqual({
      error: 'name, path are missing, at least one parameter must be provided',
    });
  });

  it('gets a project by id or by URL-encoded full path, case-insensitively', async () => {
    const owner = await person('own');
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    for (const ref of [String(project.id), encodeURIComponent(project.full_path), encodeURIComponent(project.full_path.toUpperCase())]) {
      const res = await as(await person('str')).get(`/projects/${ref}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: project.id });
    }
    expect((await as(owner).get(`/groups/${project.id}`)).status).toBe(404);
    expect(await (await as(owner).get(`/projects/${group.id}`)).json()).toEqual({ message: '404 Project Not Found' });
  });

  it('lists projects with membership and min_access_level filters', async () => {
    const [owner, member, stranger] = await Promise.all([person('own'), person('mem'), person('str')]);
    const tag = unique('pl');
    const group = await createGroup(owner);
    const a = await createProject(owner, { namespace_id: group.id, name: `${tag} a`, path: `${tag}-a` });
    const b = await createProject(owner, { namespace_id: group.id, name: `${tag} b`, path: `${tag}-b`, visibility: 'private' });
    await addMember('projects', a.id, member, 20);
    const ids = async (who: typeof owner, q: string) => ((await (await as(who).get(`/projects?search=${tag}&${q}`)).json()) as { id: number }[]).map((p) => p.id);
    expect(await ids(owner, '')).toEqual([a.id, b.id]);
    expect(await ids(stranger, '')).toEqual([a.id]);
    expect(await ids(stranger, 'membership=true')).toEqual([]);
    expect(await ids(member, 'membership=true')).toEqual([a.id]);
    expect(await ids(member, 'min_access_level=20')).toEqual([a.id]);
    expect(await ids(member, 'min_access_level=30')).toEqual([]);
    expect(await ids(owner, 'min_access_level=50')).toEqual([a.id, b.id]);
  });
});

describe('impersonation tokens', () => {
  it('are for administrators only', async () => {
    const alice = await person('alice');
    const res = await as(alice).post(`/users/${alice.id}/impersonation_tokens`, { name: 't', scopes: ['api'] });
    expect(res.status).toBe(403);
  });

  it('act as the user, with the scopes asked for', async () => {
    const alice = await person('alice');
    const issued = await admin.post(`/users/${alice.id}/impersonation_tokens`, { name: 't', scopes: 'read_api' });
    expect(issued.status).toBe(201);
    const body = (await issued.json()) as { token: string; scopes: string[]; user_id: number; impersonation: boolean; expires_at: string };
    expect(body).toMatchObject({ scopes: ['read_api'], user_id: alice.id, impersonation: true, expires_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    const me = await as({ 'PRIVATE-TOKEN': body.token }).get('/user');
    expect(await me.json()).toMatchObject({ id: alice.id, username: alice.username });
    expect((await admin.post(`/users/${alice.id}/impersonation_tokens`, { name: 't', scopes: ['sudo'] })).status).toBe(400);
    expect((await admin.post(`/users/${alice.id}/impersonation_tokens`, { name: 't', scopes: ['api'], expires_at: '2001-01-01' })).status).toBe(400);
    expect((await admin.post('/users/999999999/impersonation_tokens', { name: 't', scopes: ['api'] })).status).toBe(404);
  });
});
