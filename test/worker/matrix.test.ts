// The full role × operation matrix of the access request rules for both kinds: every access level held directly,
// inherited from the parent group or from the grandparent group, the instance administrator, the
// ADMIN_TOKEN's root, a stranger, a read_api token and an anonymous caller; on a public and on a
// private group or project. The expected answers are computed from the rules as written below,
// independently of the service's own policy code.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, call, issueToken, jsonBody, unique, type TestUser } from './support/http';
import { quickUser } from './support/world';

vi.setConfig({ testTimeout: 60_000 });

type Kind = 'groups' | 'projects';
const LEVELS = [5, 10, 15, 20, 30, 40, 50] as const;
const APPROVE_AT = ['default', 0, 5, 10, 20, 30, 40, 50, 60] as const;
type Placement = 'direct' | 'parent' | 'grandparent';

interface Standing {
  name: string;
  admin: boolean;
  level: number;
  /** Level on the private sibling, when not `level` (direct members of the public one have none). */
  hiddenLevel?: number;
  anonymous?: boolean;
  readOnly?: boolean;
}

/** GitLab's access levels and access request rules, as written. */
const rules = (kind: Kind) => {
  const effective = (s: Standing) => (s.admin ? 50 : s.level);
  const manages = (s: Standing) => effective(s) >= (kind === 'projects' ? 40 : 50);
  const validLevel = (level: number | 'default') =>
    level === 'default' || [10, 15, 20, 30, 40, 50].includes(level) || (level === 5 && kind === 'groups');
  return {
    list: (s: Standing) => (s.anonymous ? '401' : manages(s) ? '200' : '403'),
    approve: (s: Standing, level: number | 'default') => {
      if (s.anonymous) return '401';
      if (s.readOnly) return '403 insufficient_scope';
      if (!validLevel(level)) return '400 access_level';
      if (!manages(s)) return '403';
      if (level === 50 && kind === 'projects' && effective(s) < 50) return '403';
      return '201';
    },
    deny: (s: Standing) => (s.anonymous ? '401' : s.readOnly ? '403 insufficient_scope' : manages(s) ? '204' : '403'),
    request: (s: Standing) => (s.anonymous ? '401' : s.readOnly ? '403 insufficient_scope' : effective(s) > 0 ? '403' : '201'),
    read: (s: Standing) => (s.anonymous ? '401' : '200'),
    /** GitLab's members API: the same managers as for access requests; Owner on a project only by an Owner. */
    addMember: (s: Standing, level: number) => {
      if (s.anonymous) return '401';
      if (s.readOnly) return '403 insufficient_scope';
      if (!manages(s)) return '403';
      if (level === 50 && kind === 'projects' && effective(s) < 50) return '403';
      return '201';
    },
    removeMember: (s: Standing) => (s.anonymous ? '401' : s.readOnly ? '403 insufficient_scope' : manages(s) ? '204' : '403'),
    /** Settings: Owner on groups; Maintainer on projects, but Owner for visibility and path. */
    editSettings: (s: Standing, ownerPart: boolean) => {
      if (s.anonymous) return '401';
      if (s.readOnly) return '403 insufficient_scope';
      return effective(s) >= (ownerPart || kind === 'groups' ? 50 : 40) ? '200' : '403';
    },
    /** GitLab's users API: editing, blocking, unblocking, deactivating, activating and deleting users are for administrators. */
    administerUsers: (s: Standing, success: string) => (s.anonymous ? '401' : s.readOnly ? '403 insufficient_scope' : s.admin ? success : '403'),
    /** Nobody blocks themselves through the API (GitLab: "The API initiating user cannot be blocked"). */
    blockSelf: (s: Standing) => (s.anonymous ? '401' : s.readOnly ? '403 insufficient_scope' : s.admin ? '403 self' : '403'),
    /** On a private one: invisible (404) unless the caller has access; a non-pending user is 404 Not found. */
    privately: (s: Standing, op: 'list' | 'request' | 'read' | 'approve' | 'approve 0' | 'deny') => {
      if (s.anonymous) return '401';
      if (s.readOnly && (op.startsWith('approve') || op === 'deny' || op === 'request')) return '403 insufficient_scope';
      if (op === 'approve 0') return '400 access_level';
      const there = { ...s, level: s.hiddenLevel ?? s.level };
      if (effective(there) === 0) return '404 source';
      if (op === 'approve' || op === 'deny') return '404 not pending';
      if (op === 'list') return manages(there) ? '200' : '403';
      if (op === 'request') return '403';
      return '200';
    },
  };
};

/** What a response says, in the matrix's words. */
const outcome = async (res: Response): Promise<string> => {
  const text = await res.text();
  expect(res.status, text).toBeLessThan(500);
  if (res.status < 300) return String(res.status);
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = JSON.parse(text) as { message?: unknown; error?: string };
  if (res.status === 401) return body.message === '401 Unauthorized' ? '401' : `401 ${text}`;
  if (res.status === 400) return body.error === 'access_level does not have a valid value' ? '400 access_level' : `400 ${text}`;
  if (res.status === 403) {
    if (body.message === '403 Forbidden') return '403';
    if (body.message === '403 Forbidden - The API initiating user cannot be blocked by the API') return '403 self';
    return body.error === 'insufficient_scope' ? '403 insufficient_scope' : `403 ${text}`;
  }
  if (res.status === 404) {
    if (body.message === '404 Not found') return '404 not pending';
    if (body.message === '404 Group Not Found' || body.message === '404 Project Not Found') return '404 source';
  }
  return `${res.status} ${text}`;
};

let cases = 0;
afterAll(() => console.log(`matrix: ${cases} role × operation cases`));

describe.each(['groups', 'projects'] as Kind[])('role × operation matrix on %s', (kind) => {
  const rule = rules(kind);
  const actors = new Map<string, { standing: Standing; headers: Record<string, string>; user?: TestUser }>();
  let target: number;
  let hidden: number;
  let creator: TestUser;
  /**
   * Shared by the callers whose changes are all refused (a refused change leaves them as they
   * were; the deny's check below proves the request still pending): a pending requester, a user
   * who is no member, a Developer, and a user to administer. A caller expected to succeed gets
   * fresh ones.
   */
  let untouched: { requester: TestUser; outsider: TestUser; developer: TestUser; subject: TestUser };

  const root = (path: string, init: RequestInit = {}) => call(`/api/v4${path}`, { ...init, headers: { ...ADMIN, ...(init.headers ?? {}) } });

  const join = async (where: string, user: TestUser, level: number) => {
    expect((await call(`/api/v4${where}/access_requests`, { method: 'POST', headers: user.headers })).status).toBe(201);
    expect((await root(`${where}/access_requests/${user.id}/approve?access_level=${level}`, { method: 'PUT' })).status).toBe(201);
  };

  beforeAll(async () => {
    creator = await quickUser('mxc');
    const make = async (k: Kind, body: Record<string, unknown>) => {
      const path = unique('mx');
      const res = await call(`/api/v4/${k}`, jsonBody({ name: path, path, visibility: 'public', ...body }, creator.headers));
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    // grandparent ⊃ parent ⊃ target (public) and hidden (private).
    const grandparent = await make('groups', {});
    const parent = await make('groups', { parent_id: grandparent });
    const under = kind === 'groups' ? { parent_id: parent } : { namespace_id: parent };
    target = await make(kind, under);
    hidden = await make(kind, { ...under, visibility: 'private' });

    const places: Record<Placement, string> = { direct: `/${kind}/${target}`, parent: `/groups/${parent}`, grandparent: `/groups/${grandparent}` };
    for (const placement of ['direct', 'parent', 'grandparent'] as Placement[]) {
      for (const level of LEVELS) {
        if (placement === 'direct' && level === 5 && kind === 'projects') continue; // Minimal access is for groups only.
        const user = await quickUser(`mx${placement[0]}${level}`);
        await join(places[placement], user, level);
        const standing = { name: `${placement} ${level}`, admin: false, level, hiddenLevel: placement === 'direct' ? 0 : level };
        actors.set(`${placement} ${level}`, { standing, headers: user.headers, user });
      }
    }
    const stranger = await quickUser('mxs');
    actors.set('stranger', { standing: { name: 'stranger', admin: false, level: 0 }, headers: stranger.headers, user: stranger });
    const admin = await quickUser('mxa', { admin: true });
    actors.set('instance administrator', { standing: { name: 'instance administrator', admin: true, level: 0 }, headers: admin.headers, user: admin });
    actors.set('root (ADMIN_TOKEN)', { standing: { name: 'root', admin: true, level: 0 }, headers: ADMIN });
    actors.set('creator', { standing: { name: 'creator', admin: false, level: 50 }, headers: creator.headers, user: creator });
    const owner = actors.get('parent 50')!.user!;
    const readOnly = await issueToken(owner.id, owner.username, ['read_api']);
    actors.set('read_api token of an inherited Owner', { standing: { name: 'read_api', admin: false, level: 50, readOnly: true }, headers: { 'PRIVATE-TOKEN': readOnly } });
    actors.set('anonymous', { standing: { name: 'anonymous', admin: false, level: 0, anonymous: true }, headers: {} });
    actors.set('garbage token', { standing: { name: 'garbage', admin: false, level: 0, anonymous: true }, headers: { 'PRIVATE-TOKEN': 'knock_at_garbage' } });
    untouched = { requester: await pendingRequester(target), outsider: await quickUser('mxo'), developer: await developerOf(target), subject: await quickUser('mxu') };
  }, 120_000);

  const pendingRequester = async (on: number) => {
    const user = await quickUser('mxr');
    expect((await call(`/api/v4/${kind}/${on}/access_requests`, { method: 'POST', headers: user.headers })).status).toBe(201);
    return user;
  };
  const developerOf = async (on: number) => {
    const developer = await quickUser('mxd');
    expect((await root(`/${kind}/${on}/members`, jsonBody({ user_id: developer.id, access_level: 30 }))).status).toBe(201);
    return developer;
  };
  const isPending = async (userId: number) => {
    for (let page = 1; ; page++) {
      const res = await root(`/${kind}/${target}/access_requests?per_page=100&page=${page}`);
      if (((await res.json()) as { id: number }[]).some((r) => r.id === userId)) return true;
      if (!res.headers.get('x-next-page')) return false;
    }
  };

  it('lists every member placement at its level in members/all, direct members in members', async () => {
    const all = (await (await root(`/${kind}/${target}/members/all?per_page=100`)).json()) as { id: number; access_level: number }[];
    const direct = (await (await root(`/${kind}/${target}/members?per_page=100`)).json()) as { id: number; access_level: number }[];
    for (const [name, { standing, user }] of actors) {
      if (!user || standing.admin || standing.level === 0) continue;
      cases++;
      expect(all.find((m) => m.id === user.id)?.access_level, name).toBe(standing.level);
      expect(direct.some((m) => m.id === user.id), name).toBe(name.startsWith('direct') || name === 'creator');
    }
  });

  it.each([
    ...LEVELS.flatMap((l) => (['direct', 'parent', 'grandparent'] as Placement[]).map((p) => `${p} ${l}`)),
    'creator', 'stranger', 'instance administrator', 'root (ADMIN_TOKEN)', 'read_api token of an inherited Owner', 'anonymous', 'garbage token',
  ])('as %s', async (name) => {
    const actor = actors.get(name);
    if (!actor) {
      expect(name).toBe('direct 5'); // not grantable on projects
      expect(kind).toBe('projects');
      return;
    }
    const { standing, headers } = actor;
    const expected: Record<string, string> = {};
    const actual: Record<string, string> = {};
    const check = async (op: string, want: string, res: Response) => {
      cases++;
      expected[op] = want;
      actual[op] = await outcome(res);
    };
    const base = `/api/v4/${kind}/${target}`;

    await check('list', rule.list(standing), await call(`${base}/access_requests`, { headers }));
    await check('get', rule.read(standing), await call(base, { headers }));
    await check('members', rule.read(standing), await call(`${base}/members`, { headers }));
    await check('members/all', rule.read(standing), await call(`${base}/members/all`, { headers }));
    // One pending request serves each approval until one succeeds; then another user asks.
    const mayChange = APPROVE_AT.some((level) => rule.approve(standing, level) === '201') || rule.deny(standing) === '204';
    let requester = mayChange ? await pendingRequester(target) : untouched.requester;
    for (const level of APPROVE_AT) {
      const query = level === 'default' ? '' : `?access_level=${level}`;
      const res = await call(`${base}/access_requests/${requester.id}/approve${query}`, { method: 'PUT', headers });
      const want = rule.approve(standing, level);
      await check(`approve at ${level}`, want, res);
      // A refused approval changes nothing: the request is still pending when the next approval
      // expected to succeed finds it (else 404), and when the deny below is checked.
      if (want !== '201') continue;
      expect(await isPending(requester.id), `approve at ${level}: pending afterwards`).toBe(false);
      requester = await pendingRequester(target);
    }
    for (const level of [30, 50]) {
      const want = rule.addMember(standing, level);
      const newcomer = want === '201' ? await quickUser('mxm') : untouched.outsider;
      await check(`add member at ${level}`, want, await call(`${base}/members`, jsonBody({ user_id: newcomer.id, access_level: level }, headers)));
    }
    const developer = rule.removeMember(standing) === '204' ? await developerOf(target) : untouched.developer;
    await check('remove a Developer', rule.removeMember(standing), await call(`${base}/members/${developer.id}`, { method: 'DELETE', headers }));
    await check('edit description', rule.editSettings(standing, false), await call(base, jsonBody({ description: `by ${name}` }, headers, 'PUT')));
    await check('edit visibility (unchanged)', rule.editSettings(standing, true), await call(base, jsonBody({ visibility: 'public' }, headers, 'PUT')));
    // Access request rules: read by anyone who may see it, set and cleared as its settings (no requirement set, so nothing else changes).
    await check('read access request rules', rule.read(standing), await call(`${base}/access_request_rules`, { headers }));
    await check('set access request rules', rule.editSettings(standing, false), await call(`${base}/access_request_rules`, jsonBody({}, headers, 'PUT')));
    await check('clear access request rules', rule.editSettings(standing, false), await call(`${base}/access_request_rules`, { method: 'DELETE', headers }));

    await check('deny', rule.deny(standing), await call(`${base}/access_requests/${requester.id}`, { method: 'DELETE', headers }));
    expect(await isPending(requester.id), 'refused approvals and deny: pending afterwards').toBe(rule.deny(standing) !== '204');
    if (standing.level === 0 && !standing.admin && !standing.anonymous) {
      // The stranger's own request, and its withdrawal.
      await check('request', rule.request(standing), await call(`${base}/access_requests`, { method: 'POST', headers }));
      await check('withdraw own', '204', await call(`${base}/access_requests/${actor.user!.id}`, { method: 'DELETE', headers }));
    } else {
      await check('request', rule.request(standing), await call(`${base}/access_requests`, { method: 'POST', headers }));
    }

    // Users: the administrators' routes, on a user made for the purpose. They answer the same
    // whatever the caller holds in groups or projects, so they are called once per caller, in the
    // groups' matrix (which has every caller the projects' has, and Minimal Access).
    if (kind === 'groups') {
      const subject = rule.administerUsers(standing, '200') === '200' ? await quickUser('mxu') : untouched.subject;
      const users = `/api/v4/users/${subject.id}`;
      await check('edit a user', rule.administerUsers(standing, '200'), await call(users, jsonBody({ name: `Edited by ${name}` }, headers, 'PUT')));
      for (const action of ['deactivate', 'activate', 'block', 'unblock']) {
        await check(`${action} a user`, rule.administerUsers(standing, '201'), await call(`${users}/${action}`, { method: 'POST', headers }));
      }
      await check('delete a user', rule.administerUsers(standing, '204'), await call(users, { method: 'DELETE', headers }));
      if (actor.user) await check('block yourself', rule.blockSelf(standing), await call(`/api/v4/users/${actor.user.id}/block`, { method: 'POST', headers }));
    }

    // The private one: invisible to those without access, the same rules for the others.
    const hiddenBase = `/api/v4/${kind}/${hidden}`;
    const nobody = actors.get('stranger')!.user!.id;
    await check('private: list', rule.privately(standing, 'list'), await call(`${hiddenBase}/access_requests`, { headers }));
    await check('private: get', rule.privately(standing, 'read'), await call(hiddenBase, { headers }));
    await check('private: members', rule.privately(standing, 'read'), await call(`${hiddenBase}/members`, { headers }));
    await check('private: members/all', rule.privately(standing, 'read'), await call(`${hiddenBase}/members/all`, { headers }));
    await check('private: access request rules', rule.privately(standing, 'read'), await call(`${hiddenBase}/access_request_rules`, { headers }));
    await check('private: approve a user with no request', rule.privately(standing, 'approve'), await call(`${hiddenBase}/access_requests/${nobody}/approve`, { method: 'PUT', headers }));
    await check('private: approve at 0', rule.privately(standing, 'approve 0'), await call(`${hiddenBase}/access_requests/${nobody}/approve?access_level=0`, { method: 'PUT', headers }));
    await check('private: deny a user with no request', rule.privately(standing, 'deny'), await call(`${hiddenBase}/access_requests/${nobody}`, { method: 'DELETE', headers }));
    if ((standing.hiddenLevel ?? standing.level) !== 0 || standing.admin || standing.anonymous) {
      await check('private: request', rule.privately(standing, 'request'), await call(`${hiddenBase}/access_requests`, { method: 'POST', headers }));
    } else {
      await check('private: request', '404 source', await call(`${hiddenBase}/access_requests`, { method: 'POST', headers }));
    }

    expect(actual).toEqual(expected);
  });
});
