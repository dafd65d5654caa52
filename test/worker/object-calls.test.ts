import { beforeAll, describe, expect, it } from 'vitest';
import { env } from 'cloudflare:workers';
import architecture from '../../docs/architecture.md?raw';
import { partitionCount, partitionName, partitionOfId, partitionOfName } from '../../worker/durable/partitions';
import { recordedFetch, type ObjectCall } from './support/counted';
import { as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';
import { authorizeCode, Browser, csrfOf, registerApp, signedIn, type App, type Tokens, type User } from './support/oauth';

/**
 * Which Durable Objects each hot operation reaches, by class and by the name the object is reached
 * by: the table "Objects each operation calls" in docs/architecture.md, asserted here by recording
 * every call the Worker makes through its bindings. A name is written by what it stands for: the
 * signed-in or calling user (`user`), the requester of an access request (`requester`), the
 * project (`project`), the OAuth application's client id (`client`), a partition by what its number
 * is computed from (`name partition of the username`), or a fixed name in quotes.
 */

/** The table's rows: operation → the objects it calls, as `Class (name)`, sorted. */
const documented = (): Map<string, string[]> => {
  const section = /### Objects each operation calls\n([\s\S]*?)(?:\n#|$)/.exec(architecture);
  if (!section) throw new Error('docs/architecture.md needs a section "### Objects each operation calls"');
  const rows = new Map<string, string[]>();
  for (const line of section[1].split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || cells[1] === 'operation' || /^-+$/.test(cells[1])) continue;
    const objects = cells[3].startsWith('none') ? [] : cells[3].replace(/`/g, '').split(/,\s*/);
    rows.set(cells[1], objects.sort());
  }
  return rows;
};

describe('objects each operation calls (docs/architecture.md)', () => {
  let signer: User, browser: Browser, app: App, owner: Person, requester: Person, other: Person, project: { id: number }, shown: { id: number; full_path: string };
  const seen = new Map<string, string[]>();
  /** Names as the table writes them. */
  const names = new Map<string, string>();

  const label = (calls: ObjectCall[]) => [...new Set(calls.map((c) => `${c.cls} (${names.get(c.key) ?? `"${c.key}"`})`))].sort();
  const record = async (operation: string, path: string, init: RequestInit = {}) => {
    const { response, calls } = await recordedFetch(path, init);
    seen.set(operation, label(calls));
    return response;
  };

  beforeAll(async () => {
    await startWorker();
    ({ user: signer, browser } = await signedIn('calls'));
    app = await registerApp();
    [owner, requester, other] = await Promise.all([person('own'), person('req'), person('oth')]);
    const group = await createGroup(owner);
    project = await createProject(owner, { namespace_id: group.id });
    // The signed-in user is a member of the group: their dashboard lists it from its tree's partition.
    expect((await as(owner).post(`/groups/${group.id}/members`, { user_id: signer.id, access_level: 30 })).status).toBe(201);
    names.set(partitionName('index', partitionOfId(group.id, partitionCount(env))), "each tree of the user's");
    // A public project in a tree of its own partition, whose page the signed-in user opens.
    let elsewhere = await createGroup(other);
    while (partitionOfId(elsewhere.id, partitionCount(env)) === partitionOfId(group.id, partitionCount(env))) elsewhere = await createGroup(other);
    shown = await createProject(other, { namespace_id: elsewhere.id });
    names.set(partitionName('index', partitionOfId(elsewhere.id, partitionCount(env))), "the project's tree").set(String(shown.id), 'project');
    names.set(String(signer.id), 'user').set(String(owner.id), 'user').set(String(requester.id), 'requester').set(String(other.id), 'requester');
    names.set(String(project.id), 'project').set(app.clientId, 'client');
    names.set(partitionName('name', partitionOfName(signer.username, partitionCount(env))), 'name partition of the username');
    // Each caller has used its token once (the first use is recorded in the background), and this
    // isolate's registry cache knows the project (a miss asks the index partitions once per isolate).
    await Promise.all([owner, requester, other].map((p) => as(p).get('/user')));
    await recordedFetch(`/api/v4/projects/${project.id}`, { headers: owner.headers });
  }, 60_000);

  it('signs in, shows a page, exchanges a code, refreshes, checks the token and polls the inbox', async () => {
    const fresh = new Browser();
    names.set(partitionName('address', partitionOfName(fresh.address, partitionCount(env))), 'address partition of the address');
    const form = await fresh.get('/users/sign_in');
    const calls: ObjectCall[] = [];
    fresh.fetcher = async (path, init) => {
      const r = await recordedFetch(path, init);
      calls.push(...r.calls);
      return r.response;
    };
    const signIn = await fresh.post('/users/sign_in', { username: signer.username, password: signer.password, authenticity_token: csrfOf(await form.text()) });
    expect(signIn.status).toBe(303);
    seen.set('sign-in', label(calls));

    calls.length = 0;
    const page = await fresh.get('/oauth/authorized_applications');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(signer.username);
    seen.set('page view', label(calls));

    calls.length = 0;
    const dashboard = await fresh.get('/');
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('Your groups (1)');
    seen.set('dashboard', label(calls));
    // Its four sections share one answer of the user's User to which partitions are theirs.
    expect(calls.filter((c) => c.method === 'indexPartitions')).toHaveLength(1);

    // Once before: this isolate finds the project, and its tree's partition keeps the members' names.
    expect((await fresh.get(`/${shown.full_path}`)).status).toBe(200);
    calls.length = 0;
    const projectPage = await fresh.get(`/${shown.full_path}`);
    expect(projectPage.status).toBe(200);
    expect(await projectPage.text()).toContain(shown.full_path);
    seen.set('project page', label(calls));

    const { code } = await authorizeCode(browser, app);
    const json = (body: Record<string, string>): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const client = { client_id: app.clientId, client_secret: app.secret ?? '' };
    const exchanged = await record('code exchange', '/login/oauth/access_token', json({ ...client, code, redirect_uri: app.redirectUri }));
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as Tokens;

    const refreshed = await record('refresh', '/login/oauth/access_token', json({ ...client, grant_type: 'refresh_token', refresh_token: tokens.refresh_token }));
    expect(refreshed.status).toBe(200);
    const { access_token } = (await refreshed.json()) as Tokens;

    const me = await record('token check', '/api/v4/user', { headers: { Authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: signer.id, username: signer.username });

    // The inbox poll as the extension makes it: an OAuth access token and the ETag of its last answer.
    const bearer = { Authorization: `Bearer ${access_token}` };
    const { response: inbox } = await recordedFetch('/api/v4/access_requests', { headers: bearer });
    expect(inbox.status).toBe(200);
    const poll = await record('inbox poll', '/api/v4/access_requests', { headers: { ...bearer, 'If-None-Match': inbox.headers.get('etag') ?? '' } });
    expect(poll.status).toBe(304);
  });

  it('requests, reads the inbox, lists, approves and denies', async () => {
    const api = (who: Person, method: string) => ({ method, headers: who.headers });
    expect((await record('request', `/api/v4/projects/${project.id}/access_requests`, api(requester, 'POST'))).status).toBe(201);
    expect((await as(other).post(`/projects/${project.id}/access_requests`)).status).toBe(201);
    const mine = await record('your projects', '/api/v4/projects?membership=true', api(owner, 'GET'));
    expect(((await mine.json()) as { id: number }[]).map((p) => p.id)).toEqual([project.id]);
    const inbox = await record('inbox', '/api/v4/access_requests', api(owner, 'GET'));
    expect(((await inbox.json()) as { id: number }[]).map((r) => r.id).sort()).toEqual([requester.id, other.id].sort());
    const list = await record('list', `/api/v4/projects/${project.id}/access_requests`, api(owner, 'GET'));
    expect(list.status).toBe(200);
    expect(((await list.json()) as { id: number }[]).map((r) => r.id).sort()).toEqual([requester.id, other.id].sort());
    expect((await record('approve', `/api/v4/projects/${project.id}/access_requests/${requester.id}/approve`, api(owner, 'PUT'))).status).toBe(201);
    expect((await record('deny', `/api/v4/projects/${project.id}/access_requests/${other.id}`, api(owner, 'DELETE'))).status).toBe(204);
  });

  it('agrees with the table in docs/architecture.md', () => {
    expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(documented()));
  });
});
