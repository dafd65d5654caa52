import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import { counted, namespaceCalls } from './support/counted';
import { addMember, admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';

/**
 * Listing, approving, denying and requesting cost the token's KV read and one call to the
 * namespace's Durable Object once the group or project is known to the isolate: the object
 * judges the caller on its own members, asks the ancestor groups' objects only when that
 * is not enough, and keeps each requester's name with the request.
 */

describe('access requests answered by the namespace object alone', () => {
  let owner: Person, maintainer: Person, developer: Person, instanceAdmin: Person;
  let group: { id: number }, project: { id: number; full_path: string };

  beforeAll(async () => {
    await startWorker();
    [owner, maintainer, developer, instanceAdmin] = await Promise.all([person('own'), person('mnt'), person('dev'), person('adm', { admin: true })]);
    group = await createGroup(owner);
    project = await createProject(owner, { namespace_id: group.id });
    await addMember('projects', project.id, maintainer, 40);
    await addMember('projects', project.id, developer, 30);
  }, 30_000);

  it('lists for a direct Maintainer with one Durable Object call, names from the requests', async () => {
    const requesters = await Promise.all([person('req'), person('req')]);
    for (const r of requesters) expect((await as(r).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    await counted(`/projects/${project.id}/access_requests`, maintainer.headers);

    const page = await counted(`/projects/${project.id}/access_requests`, maintainer.headers);
    expect(page.status).toBe(200);
    expect(page.calls).toEqual(['Namespace.listAccessRequests']);
    const listed = (page.body as { id: number; username: string; name: string; state: string }[]).slice(-2);
    expect(listed).toEqual(requesters.map((r) => expect.objectContaining({ id: r.id, username: r.username, name: r.name, state: 'active' })));

    const byPath = await counted(`/projects/${encodeURIComponent(project.full_path.toUpperCase())}/access_requests`, maintainer.headers);
    expect(byPath.status).toBe(200);
    expect(byPath.calls).toEqual(['Namespace.listAccessRequests']);
  });

  it('answers a page read again with every change since: a new request, a rename, an approval counted, a denial, a block', async () => {
    // The object keeps the pages it read until a write to a request or an approval (core.ts
    // `requestPage`); each step below reads the same page again after one such write.
    const own = await createProject(owner, { namespace_id: group.id });
    await addMember('projects', own.id, maintainer, 40);
    expect((await as(owner).put(`/projects/${own.id}/access_request_rules`, { approvals_required: 2 })).status).toBe(200);
    const [first, second] = await Promise.all([person('req'), person('req')]);
    const page = async () =>
      (await (await as(owner).get(`/projects/${own.id}/access_requests`)).json()) as { id: number; username: string; name: string; approvals: { id: number }[] }[];

    expect((await as(first).post(`/projects/${own.id}/access_requests`)).status).toBe(201);
    expect((await page()).map((r) => r.id)).toEqual([first.id]);
    expect((await page()).map((r) => r.id)).toEqual([first.id]);

    expect((await as(second).post(`/projects/${own.id}/access_requests`)).status).toBe(201);
    expect((await page()).map((r) => r.id)).toEqual([first.id, second.id]);

    expect((await admin.put(`/users/${first.id}`, { name: 'Renamed Requester' })).status).toBe(200);
    expect((await page())[0]).toMatchObject({ id: first.id, name: 'Renamed Requester' });

    expect((await as(maintainer).put(`/projects/${own.id}/access_requests/${first.id}/approve`)).status).toBe(202);
    expect((await page())[0].approvals).toEqual([expect.objectContaining({ id: maintainer.id })]);

    expect((await as(owner).delete(`/projects/${own.id}/access_requests/${second.id}`)).status).toBe(204);
    expect((await page()).map((r) => r.id)).toEqual([first.id]);

    const third = await person('req');
    expect((await as(third).post(`/projects/${own.id}/access_requests`)).status).toBe(201);
    expect((await page()).map((r) => r.id)).toEqual([first.id, third.id]);
    expect((await admin.post(`/users/${third.id}/block`)).status).toBe(201);
    expect((await page()).map((r) => r.id)).toEqual([first.id]);
  });

  it('stores the requester username and name with the request', async () => {
    const requester = await person('req');
    expect((await as(requester).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    const row = await runInDurableObject(env.NAMESPACES.getByName(String(project.id)), (_i: Namespace, state) =>
      state.storage.sql.exec('SELECT username, name FROM access_requests WHERE user_id = ?', requester.id).one(),
    );
    expect(row).toEqual({ username: requester.username, name: requester.name });
  });

  it('approves and denies with one call, the approved record naming requester and approver', async () => {
    const [approved, denied] = await Promise.all([person('req'), person('req')]);
    for (const r of [approved, denied]) expect((await as(r).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    await counted(`/projects/${project.id}/access_requests`, owner.headers);

    const put = await counted(`/projects/${project.id}/access_requests/${approved.id}/approve?access_level=20`, maintainer.headers, 'PUT');
    expect(put.status).toBe(201);
    expect(put.calls).toEqual(['Namespace.approveAccessRequest']);
    expect(put.body).toMatchObject({
      id: approved.id,
      username: approved.username,
      name: approved.name,
      access_level: 20,
      created_by: { id: maintainer.id, username: maintainer.username, name: maintainer.name },
    });

    const del = await counted(`/projects/${project.id}/access_requests/${denied.id}`, owner.headers, 'DELETE');
    expect(del.status).toBe(204);
    expect(del.calls).toEqual(['Namespace.removeAccessRequest']);
  });

  it('needs no Directory for an administrator either', async () => {
    await counted(`/projects/${project.id}/access_requests`, instanceAdmin.headers);
    const page = await counted(`/projects/${project.id}/access_requests`, instanceAdmin.headers);
    expect(page.status).toBe(200);
    expect(page.calls).toEqual(['Namespace.listAccessRequests']);
  });

  it('still refuses a Developer, and lets a group Owner in through the group', async () => {
    const groupOwner = await person('gown');
    await addMember('groups', group.id, groupOwner, 50);
    await counted(`/projects/${project.id}/access_requests`, owner.headers);

    const refused = await counted(`/projects/${project.id}/access_requests`, developer.headers);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: '403 Forbidden' });

    const inherited = await counted(`/projects/${project.id}/access_requests`, groupOwner.headers);
    expect(inherited.status).toBe(200);
    expect(namespaceCalls(inherited.calls)).toEqual(['Namespace.listAccessRequests']);
  });

  it('calls no Namespace object for an id or path the registry does not know', async () => {
    const missing = await counted('/projects/987654321/access_requests', owner.headers);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Project Not Found' });
    expect(namespaceCalls(missing.calls)).toEqual([]);

    const wrongKind = await counted(`/groups/${project.id}/access_requests`, owner.headers);
    expect(wrongKind.status).toBe(404);
    expect(wrongKind.body).toEqual({ message: '404 Group Not Found' });
    expect(namespaceCalls(wrongKind.calls)).toEqual([]);
  });
});

describe('visibility judged by the namespace object', () => {
  it('keeps a known private project 404 to outsiders and 403 to a member through its group', async () => {
    const [owner, stranger, groupDeveloper] = await Promise.all([person('own'), person('str'), person('gdev')]);
    const group = await createGroup(owner, { visibility: 'private' });
    const project = await createProject(owner, { namespace_id: group.id, visibility: 'private' });
    const requested = await as(stranger).post(`/groups/${group.id}/access_requests`);
    expect(requested.status).toBe(404);
    // The stranger cannot see the group to ask, so the request is seeded, then approved.
    await runInDurableObject(env.NAMESPACES.getByName(String(group.id)), (_i: Namespace, state) => {
      state.storage.sql.exec('INSERT INTO access_requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?)', groupDeveloper.id, new Date().toISOString(), groupDeveloper.username, groupDeveloper.username);
    });
    expect((await admin.put(`/groups/${group.id}/access_requests/${groupDeveloper.id}/approve?access_level=30`)).status).toBe(201);
    await counted(`/projects/${project.id}/access_requests`, owner.headers);

    const notFound = { message: '404 Project Not Found' };
    for (const [method, path] of [
      ['GET', `/projects/${project.id}/access_requests`],
      ['POST', `/projects/${project.id}/access_requests`],
      ['PUT', `/projects/${project.id}/access_requests/${owner.id}/approve`],
      ['DELETE', `/projects/${project.id}/access_requests/${stranger.id}`],
    ]) {
      const res = await counted(path, stranger.headers, method);
      expect([method, res.status, res.body]).toEqual([method, 404, notFound]);
    }
    const member = await counted(`/projects/${project.id}/access_requests`, groupDeveloper.headers, 'POST');
    expect(member.status).toBe(403);
    const list = await counted(`/projects/${project.id}/access_requests`, groupDeveloper.headers);
    expect(list.status).toBe(403);
  });
});
