import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/http';
import { addMember, admin, as, createNestedSource, createSource, KIND_ROUTES, person, type KindRoute, type Person } from './support/namespaces';

type Role = 'owner' | 'maintainer' | 'developer' | 'requester' | 'stranger' | 'admin' | 'anonymous';
const ROLES: Role[] = ['owner', 'maintainer', 'developer', 'requester', 'stranger', 'admin', 'anonymous'];

/** "Who may do what": expected status per kind, operation and role. */
const EXPECTED: Record<KindRoute, Record<'list' | 'request' | 'approve' | 'deny', Record<Role, number>>> = {
  groups: {
    list: { owner: 200, maintainer: 403, developer: 403, requester: 403, stranger: 403, admin: 200, anonymous: 401 },
    request: { owner: 403, maintainer: 403, developer: 403, requester: 400, stranger: 201, admin: 403, anonymous: 401 },
    approve: { owner: 201, maintainer: 403, developer: 403, requester: 403, stranger: 403, admin: 201, anonymous: 401 },
    deny: { owner: 204, maintainer: 403, developer: 403, requester: 204, stranger: 403, admin: 204, anonymous: 401 },
  },
  projects: {
    list: { owner: 200, maintainer: 200, developer: 403, requester: 403, stranger: 403, admin: 200, anonymous: 401 },
    request: { owner: 403, maintainer: 403, developer: 403, requester: 400, stranger: 201, admin: 403, anonymous: 401 },
    approve: { owner: 201, maintainer: 201, developer: 403, requester: 403, stranger: 403, admin: 201, anonymous: 401 },
    deny: { owner: 204, maintainer: 204, developer: 403, requester: 204, stranger: 403, admin: 204, anonymous: 401 },
  },
};

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(KIND_ROUTES)('access requests on %s', (kind) => {
  let owner: Person, maintainer: Person, developer: Person, instanceAdmin: Person;
  let id: number;
  const notFound = { message: kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found' };

  beforeAll(async () => {
    [owner, maintainer, developer, instanceAdmin] = await Promise.all([person('own'), person('mnt'), person('dev'), person('adm', { admin: true })]);
    const source = await createSource(kind, owner);
    id = source.id;
    await addMember(kind, id, maintainer, 40);
    await addMember(kind, id, developer, 30);
  }, 30_000);

  /** A new user with a pending request. */
  const pending = async () => {
    const user = await person('req');
    expect((await as(user).post(`/${kind}/${id}/access_requests`)).status).toBe(201);
    return user;
  };
  const isPending = async (user: Person) => {
    const res = await admin.get(`/${kind}/${id}/access_requests?per_page=100`);
    return ((await res.json()) as { id: number }[]).some((r) => r.id === user.id);
  };
  const client = async (role: Role, requester: Person) => {
    switch (role) {
      case 'owner': return as(owner);
      case 'maintainer': return as(maintainer);
      case 'developer': return as(developer);
      case 'requester': return as(requester);
      case 'stranger': return as(await person('str'));
      case 'admin': return as(instanceAdmin);
      case 'anonymous': return as({});
    }
  };

  describe.each(ROLES)('as %s', (role) => {
    it('lists', async () => {
      const requester = await pending();
      const res = await (await client(role, requester)).get(`/${kind}/${id}/access_requests`);
      expect(res.status).toBe(EXPECTED[kind].list[role]);
      if (res.status === 200) expect(await res.json()).toEqual(expect.arrayContaining([expect.objectContaining({ id: requester.id })]));
    });

    it('requests access', async () => {
      const requester = await pending();
      const res = await (await client(role, requester)).post(`/${kind}/${id}/access_requests`);
      expect(res.status).toBe(EXPECTED[kind].request[role]);
      if (res.status === 400) expect(await res.json()).toEqual({ message: { user_id: ['already exists in source'] } });
      if (res.status === 403) expect(await res.json()).toEqual({ message: '403 Forbidden' });
    });

    it('approves', async () => {
      const requester = await pending();
      const res = await (await client(role, requester)).put(`/${kind}/${id}/access_requests/${requester.id}/approve`);
      expect(res.status).toBe(EXPECTED[kind].approve[role]);
      expect(await isPending(requester)).toBe(res.status !== 201);
      if (res.status === 201) {
        const members = (await (await admin.get(`/${kind}/${id}/members?per_page=100`)).json()) as { id: number; access_level: number }[];
        expect(members).toContainEqual(expect.objectContaining({ id: requester.id, access_level: 30 }));
      }
    });

    it('denies (or, as the requester, withdraws)', async () => {
      const requester = await pending();
      const res = await (await client(role, requester)).delete(`/${kind}/${id}/access_requests/${requester.id}`);
      expect(res.status).toBe(EXPECTED[kind].deny[role]);
      if (res.status === 204) expect(await res.text()).toBe('');
      expect(await isPending(requester)).toBe(res.status !== 204);
    });
  });

  it('returns the access request record, and the approved record', async () => {
    const requester = await person('rec');
    const created = await as(requester).post(`/${kind}/${id}/access_requests`);
    expect(created.headers.get('content-type')).toBe('application/json');
    const record = await created.json();
    expect(record).toEqual({
      id: requester.id,
      username: requester.username,
      name: requester.name,
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `http://knock.test/${requester.username}`,
      created_at: expect.stringMatching(ISO_MS),
      requested_at: expect.stringMatching(ISO_MS),
      // Knock's additions: nothing asked, one approval needed.
      reason: null,
      access_level: null,
      expires_at: null,
      approvals_required: 1,
      approvals: [],
    });
    const listed = (await (await as(owner).get(`/${kind}/${id}/access_requests?per_page=100`)).json()) as unknown[];
    expect(listed).toContainEqual(record);

    const approved = await as(owner).put(`/${kind}/${id}/access_requests/${requester.id}/approve?access_level=20`);
    expect(approved.status).toBe(201);
    expect(await approved.json()).toEqual({
      id: requester.id,
      username: requester.username,
      name: requester.name,
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `http://knock.test/${requester.username}`,
      created_at: expect.stringMatching(ISO_MS),
      access_level: 20,
      expires_at: null,
      created_by: { id: owner.id, username: owner.username, name: owner.name },
    });
  });

  it('accepts the URL-encoded full path as :id, case-insensitively', async () => {
    const nested = await createNestedSource(kind, owner);
    const requester = await person('pth');
    const encoded = encodeURIComponent(nested.full_path.toUpperCase());
    expect(encoded).toContain('%2F');
    expect((await as(requester).post(`/${kind}/${encoded}/access_requests`)).status).toBe(201);
    const list = await as(owner).get(`/${kind}/${encodeURIComponent(nested.full_path)}/access_requests?per_page=100`);
    expect(await list.json()).toContainEqual(expect.objectContaining({ id: requester.id }));
    expect((await as(owner).put(`/${kind}/${encoded}/access_requests/${requester.id}/approve`)).status).toBe(201);
    const other = await person('pth');
    await as(other).post(`/${kind}/${nested.id}/access_requests`);
    expect((await as(owner).delete(`/${kind}/${encoded}/access_requests/${other.id}`)).status).toBe(204);
  });

  it('is 404 for an unknown id or path', async () => {
    for (const ref of ['999999999', encodeURIComponent('no/such/thing')]) {
      const res = await as(owner).get(`/${kind}/${ref}/access_requests`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(notFound);
    }
  });

  it('is 404 Not found when the user has no pending request (approve and deny), before 403', async () => {
    const nobody = await person('nob');
    for (const who of [owner, developer]) {
      const approve = await as(who).put(`/${kind}/${id}/access_requests/${nobody.id}/approve`);
      expect(approve.status).toBe(404);
      expect(await approve.json()).toEqual({ message: '404 Not found' });
      const deny = await as(who).delete(`/${kind}/${id}/access_requests/${nobody.id}`);
      expect(deny.status).toBe(404);
      expect(await deny.json()).toEqual({ message: '404 Not found' });
    }
  });

  describe('access_level', () => {
    const invalid = kind === 'groups' ? [0, 7, 60, -10, '', 'abc', '30.5', 30.5, true, null] : [0, 5, 7, 60, -10, '', 'abc', '30.5', 30.5, true, null];

    it.each(invalid)('refuses %j with 400, leaving the request pending', async (level) => {
      const requester = await pending();
      const viaQuery = typeof level === 'string' || typeof level === 'number';
      const res = viaQuery
        ? await as(owner).put(`/${kind}/${id}/access_requests/${requester.id}/approve?access_level=${encodeURIComponent(String(level))}`)
        : await as(owner).put(`/${kind}/${id}/access_requests/${requester.id}/approve`, { access_level: level });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'access_level does not have a valid value' });
      expect(await isPending(requester)).toBe(true);
    });

    it('defaults to Developer (30)', async () => {
      const requester = await pending();
      const res = await as(owner).put(`/${kind}/${id}/access_requests/${requester.id}/approve`);
      expect(await res.json()).toMatchObject({ access_level: 30 });
    });

    it('is read from a JSON body, a form body or the query', async () => {
      const [a, b, c] = [await pending(), await pending(), await pending()];
      const json = await as(owner).put(`/${kind}/${id}/access_requests/${a.id}/approve`, { access_level: 40 });
      expect(await json.json()).toMatchObject({ access_level: 40 });
      const form = await call(`/api/v4/${kind}/${id}/access_requests/${b.id}/approve`, {
        method: 'PUT',
        headers: { ...owner.headers, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'access_level=20',
      });
      expect(await form.json()).toMatchObject({ access_level: 20 });
      const query = await as(owner).put(`/${kind}/${id}/access_requests/${c.id}/approve?access_level=10`);
      expect(await query.json()).toMatchObject({ access_level: 10 });
    });

    it('grants Minimal access (5) on groups only, and Owner (50) on projects only when the approver is an Owner', async () => {
      const minimal = await pending();
      const res5 = await as(owner).put(`/${kind}/${id}/access_requests/${minimal.id}/approve?access_level=5`);
      expect(res5.status).toBe(kind === 'groups' ? 201 : 400);

      const byOwner = await pending();
      expect((await as(owner).put(`/${kind}/${id}/access_requests/${byOwner.id}/approve?access_level=50`)).status).toBe(201);

      if (kind === 'projects') {
        const byMaintainer = await pending();
        const res = await as(maintainer).put(`/${kind}/${id}/access_requests/${byMaintainer.id}/approve?access_level=50`);
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ message: '403 Forbidden' });
        expect(await isPending(byMaintainer)).toBe(true);
        expect((await as(maintainer).put(`/${kind}/${id}/access_requests/${byMaintainer.id}/approve?access_level=40`)).status).toBe(201);
      }
    });
  });

  describe('error precedence', () => {
    it('401 before 400', async () => {
      const res = await as({}).put(`/${kind}/${id}/access_requests/1/approve?access_level=0`);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message: '401 Unauthorized' });
    });

    it('400 before 404 Group/Project Not Found', async () => {
      const res = await as(owner).put(`/${kind}/999999999/access_requests/1/approve?access_level=0`);
      expect(res.status).toBe(400);
      const badUser = await as(owner).delete(`/${kind}/999999999/access_requests/not-a-number`);
      expect(badUser.status).toBe(400);
      expect(await badUser.json()).toEqual({ error: 'user_id is invalid' });
    });

    it('404 Group/Project Not Found before 404 Not found', async () => {
      const res = await as(owner).put(`/${kind}/999999999/access_requests/${owner.id}/approve`);
      expect(await res.json()).toEqual(notFound);
    });

    it('404 Not found before 403', async () => {
      const res = await as(await person('str')).delete(`/${kind}/${id}/access_requests/999999999`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: '404 Not found' });
    });
  });

  describe('a private one', () => {
    let privateId: number;
    let privatePath: string;
    beforeAll(async () => {
      const source = await createSource(kind, owner, { visibility: 'private' });
      privateId = source.id;
      privatePath = source.full_path;
    });

    it('is 404 to a user who cannot see it, for every operation and for its path', async () => {
      const stranger = await person('str');
      for (const ref of [String(privateId), encodeURIComponent(privatePath)]) {
        const responses = await Promise.all([
          as(stranger).get(`/${kind}/${ref}`),
          as(stranger).get(`/${kind}/${ref}/access_requests`),
          as(stranger).post(`/${kind}/${ref}/access_requests`),
          as(stranger).put(`/${kind}/${ref}/access_requests/${owner.id}/approve`),
          as(stranger).delete(`/${kind}/${ref}/access_requests/${stranger.id}`),
          as(stranger).get(`/${kind}/${ref}/members`),
        ]);
        for (const res of responses) {
          expect(res.status).toBe(404);
          expect(await res.json()).toEqual(notFound);
        }
      }
    });

    it('is visible to its members and to administrators', async () => {
      expect((await as(owner).get(`/${kind}/${privateId}`)).status).toBe(200);
      expect((await as(instanceAdmin).get(`/${kind}/${privateId}`)).status).toBe(200);
      expect((await admin.get(`/${kind}/${encodeURIComponent(privatePath)}/access_requests`)).status).toBe(200);
    });
  });

  it('refuses requests with 403 when request_access_enabled is false', async () => {
    const closed = await createSource(kind, owner, { request_access_enabled: false });
    expect(closed).toMatchObject({ request_access_enabled: false });
    const res = await as(await person('str')).post(`/${kind}/${closed.id}/access_requests`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ message: '403 Forbidden' });
  });

  it('lets a read_api token list but not approve', async () => {
    const requester = await pending();
    const issued = await admin.post(`/users/${owner.id}/impersonation_tokens`, { name: 'read', scopes: ['read_api'] });
    const { token } = (await issued.json()) as { token: string };
    const reader = as({ 'PRIVATE-TOKEN': token });
    expect((await reader.get(`/${kind}/${id}/access_requests`)).status).toBe(200);
    const res = await reader.put(`/${kind}/${id}/access_requests/${requester.id}/approve`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
  });
});
