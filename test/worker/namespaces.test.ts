import { describe, expect, it } from 'vitest';
import { admin, as, createGroup, createProject, person } from './support/namespaces';

describe('groups and projects', () => {
  it('creates a group and a project in it; the creator is Owner', async () => {
    const alice = await person('alice');
    const group = await createGroup(alice);
    const project = await createProject(alice, { namespace_id: group.id });
    expect(project).toMatchObject({ path_with_namespace: `${group.full_path}/${project.path}` });
    const members = await as(alice).get(`/projects/${project.id}/members`);
    expect(members.status).toBe(200);
    expect(await members.json()).toMatchObject([{ id: alice.id, access_level: 50 }]);
    const byPath = await admin.get(`/projects/${encodeURIComponent(project.full_path.toUpperCase())}`);
    expect(byPath.status).toBe(200);
  });
});
