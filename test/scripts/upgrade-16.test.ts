// An update keeps a deployment's state working: the real local server of this version starts on
// the state the version before sign-in moved out of the Directory wrote (fixtures/state-before-16,
// written by support/write-state-before-16.mjs), and its users, tokens, sessions, memberships and
// requests still work: users sign in by their names (the `name:` partitions have no copies yet,
// then the Directory's alarm copies them), a user renamed before signs in only by the new name.
// The fixture holds nothing that expires (tokens and sessions would): tokens are issued after the
// update with its ADMIN_TOKEN.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient, freePort, startServer, type Server } from './support/crash-server';
// @ts-expect-error: plain ESM module without types
import { formSession } from './support/form-session.mjs';

const FIXTURES = join(import.meta.dirname, 'fixtures');
interface Person {
  id: number;
  username: string;
  password: string;
}
const before = JSON.parse(readFileSync(join(FIXTURES, 'state-before-16.json'), 'utf8')) as {
  vars: { ADMIN_TOKEN: string; TOKEN_HASH_KEY: string };
  owner: Person;
  requester: Person;
  member: Person;
  renamed: Person & { formerUsername: string };
  project: { id: number };
};

interface Session {
  cookies: Map<string, string>;
  get: (path: string) => Promise<Response>;
  signIn: (username: string, password: string) => Promise<Response>;
}

describe('an update from the state written before sign-in moved to partitions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-upgrade-'));
  let server: Server | null = null;
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs the users in, and keeps their memberships and requests', async () => {
    cpSync(join(FIXTURES, 'state-before-16'), join(dir, 'state'), { recursive: true });
    server = await startServer({ port: await freePort(), persistTo: join(dir, 'state'), vars: before.vars });
    const url = server.url;
    const api = apiClient(() => url);
    const session = (): Session => formSession(url);

    for (const user of [before.owner, before.requester, before.member, before.renamed]) {
      expect([user.username, (await session().signIn(user.username, user.password)).status]).toEqual([user.username, 303]);
    }
    expect((await session().signIn(before.renamed.formerUsername, before.renamed.password)).status).toBe(401);
    expect((await session().signIn(before.owner.username, 'not-the-password')).status).toBe(401);

    const tokenOf = async (user: Person) => {
      const issued = await api('POST', `/users/${user.id}/impersonation_tokens`, before.vars.ADMIN_TOKEN, { name: 'after', scopes: ['api'] });
      expect(issued.status).toBe(201);
      return issued.body.token as string;
    };
    const ownerToken = await tokenOf(before.owner);
    expect(await api('GET', '/user', ownerToken)).toMatchObject({ status: 200, body: { id: before.owner.id, username: before.owner.username } });

    // A session begun after the update shows the user.
    const browser = session();
    expect((await browser.signIn(before.owner.username, before.owner.password)).status).toBe(303);
    const page = await browser.get('/oauth/authorized_applications');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(before.owner.username);

    const list = await api('GET', `/projects/${before.project.id}/access_requests`, ownerToken);
    expect(list.status).toBe(200);
    expect((list.body as { username: string }[]).map((r) => r.username)).toEqual([before.requester.username]);
    const approved = await api('PUT', `/projects/${before.project.id}/access_requests/${before.requester.id}/approve`, ownerToken);
    expect(approved.status).toBe(201);

    // A group Maintainer from before lists the project's requests through the group.
    expect((await api('GET', `/projects/${before.project.id}/access_requests`, await tokenOf(before.member))).status).toBe(200);

    // Changes after the update reach the new copies: a rename moves the name.
    expect((await api('PUT', `/users/${before.member.id}`, before.vars.ADMIN_TOKEN, { username: 'memberrenamed16' })).status).toBe(200);
    expect((await session().signIn('memberrenamed16', before.member.password)).status).toBe(303);
    expect((await session().signIn(before.member.username, before.member.password)).status).toBe(401);
  });
});
