import { Gitlab } from '@gitbeaker/rest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { startServer } from '../../worker/dev/server.mjs';
import { SYSTEM_TEST_VARS } from '../scripts/support/server-vars';

// An unmodified GitLab client library (gitbeaker, as used by many GitLab integrations) pointed
// at Knock: everything below is gitbeaker's own API, nothing Knock-specific.
const ADMIN_TOKEN = 'gitbeaker-admin-token';

describe('a GitLab client library against Knock', () => {
  const state = mkdtempSync(join(tmpdir(), 'knock-gitbeaker-'));
  let server: { url: string; stop: () => Promise<void> };
  let admin: InstanceType<typeof Gitlab>;

  beforeAll(async () => {
    server = await startServer({ persistTo: state, vars: { ...SYSTEM_TEST_VARS, ADMIN_TOKEN, TOKEN_HASH_KEY: 'gitbeaker-hash-key' } });
    admin = new Gitlab({ host: server.url, token: ADMIN_TOKEN });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  const userWithToken = async (username: string) => {
    const user = await admin.Users.create({ username, name: username.toUpperCase(), password: `${username}-password-1`, email: `${username}@example.com` });
    const token = await admin.UserImpersonationTokens.create(user.id, 'gitbeaker', ['api']);
    return { user, api: new Gitlab({ host: server.url, token: token.token as string }) };
  };

  it('lists, requests, approves and denies access requests for groups and projects', async () => {
    const owner = await userWithToken('olivia');
    const bob = await userWithToken('bobby');
    const carol = await userWithToken('carla');

    const group = await owner.api.Groups.create('Umbrella', 'umbrella', { visibility: 'public' });
    const project = await owner.api.Projects.create({ name: 'Site', path: 'site', namespaceId: group.id, visibility: 'public' });
    expect(project.path_with_namespace).toBe('umbrella/site');

    // The project first: once bob is in the group he is already a member of its projects.
    for (const [requests, id] of [
      [owner.api.ProjectAccessRequests, project.id],
      [owner.api.GroupAccessRequests, group.id],
    ] as const) {
      const bobsApi = requests === owner.api.GroupAccessRequests ? bob.api.GroupAccessRequests : bob.api.ProjectAccessRequests;
      const carolsApi = requests === owner.api.GroupAccessRequests ? carol.api.GroupAccessRequests : carol.api.ProjectAccessRequests;

      const requested = await bobsApi.request(id);
      expect(requested).toMatchObject({ id: bob.user.id, username: 'bobby', state: 'active' });
      await carolsApi.request(id);

      const pending = await requests.all(id);
      expect(pending.map((r) => r.username)).toEqual(['bobby', 'carla']);

      const approved = await requests.approve(id, bob.user.id, { accessLevel: 40 });
      expect(approved).toMatchObject({ id: bob.user.id, access_level: 40 });
      await requests.deny(id, carol.user.id);
      expect(await requests.all(id)).toEqual([]);
    }

    const groupMembers = await owner.api.GroupMembers.all(group.id);
    expect(groupMembers.map((m) => [m.username, m.access_level])).toEqual(expect.arrayContaining([['olivia', 50], ['bobby', 40]]));
    expect(groupMembers.map((m) => m.username)).not.toContain('carla');
    const projectMembers = await owner.api.ProjectMembers.all(project.id, { includeInherited: true });
    expect(projectMembers.map((m) => m.username)).toEqual(expect.arrayContaining(['olivia', 'bobby']));
  });

  it('adds, edits and removes members, and makes, uses, lists and revokes a personal access token', async () => {
    const owner = await userWithToken('ophelia');
    const bert = await userWithToken('bert');
    const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const group = await owner.api.Groups.create('Lifecycle', 'lifecycle', { visibility: 'public' });
    const project = await owner.api.Projects.create({ name: 'App', path: 'app', namespaceId: group.id, visibility: 'public' });

    for (const [members, id] of [
      [owner.api.GroupMembers, group.id],
      [owner.api.ProjectMembers, project.id],
    ] as const) {
      const added = await members.add(id, 30, { userId: bert.user.id, expiresAt: day(30) });
      expect(added).toMatchObject({ username: 'bert', access_level: 30, expires_at: day(30) });
      expect(await members.edit(id, bert.user.id, 40, { expiresAt: day(60) })).toMatchObject({ access_level: 40, expires_at: day(60) });
      expect(await members.show(id, bert.user.id)).toMatchObject({ access_level: 40, expires_at: day(60) });
      await members.remove(id, bert.user.id);
      expect((await members.all(id)).map((m) => m.username)).toEqual(['ophelia']);
    }

    // A personal access token, made by an administrator for bert; bert uses it, then revokes it.
    const pat = await admin.PersonalAccessTokens.create(bert.user.id, 'gitbeaker-ci', ['api', 'read_user'], { expiresAt: day(30) });
    expect(pat).toMatchObject({ name: 'gitbeaker-ci', scopes: ['api', 'read_user'], active: true, revoked: false, expires_at: day(30), user_id: bert.user.id });
    const withPat = new Gitlab({ host: server.url, token: pat.token as string });
    expect(await withPat.Users.showCurrentUser()).toMatchObject({ username: 'bert' });
    const asBearer = new Gitlab({ host: server.url, oauthToken: pat.token as string });
    expect(await asBearer.Users.showCurrentUser()).toMatchObject({ username: 'bert' });
    expect(await withPat.PersonalAccessTokens.show()).toMatchObject({ id: pat.id, name: 'gitbeaker-ci' });
    expect((await withPat.PersonalAccessTokens.all()).map((t) => t.id)).toEqual([pat.id]);
    expect((await admin.PersonalAccessTokens.all({ userId: bert.user.id })).map((t) => t.id)).toContain(pat.id);
    await withPat.PersonalAccessTokens.remove({ tokenId: pat.id as number });
    await expect(withPat.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });
  });

  it("edits, blocks, unblocks, deactivates, activates and deletes a user through gitbeaker's own calls", async () => {
    const dora = await userWithToken('dora');
    const pat = await admin.PersonalAccessTokens.create(dora.user.id, 'dora-script', ['read_api']);
    const withPat = new Gitlab({ host: server.url, token: pat.token as string });
    const edited = await admin.Users.edit(dora.user.id, { name: 'Dora Explorer', email: 'dora.explorer@example.com' });
    expect(edited).toMatchObject({ id: dora.user.id, name: 'Dora Explorer', email: 'dora.explorer@example.com' });
    // The token dora already holds shows the new profile.
    expect(await dora.api.Users.showCurrentUser()).toMatchObject({ name: 'Dora Explorer' });

    await admin.Users.block(dora.user.id);
    expect(await admin.Users.show(dora.user.id)).toMatchObject({ state: 'blocked' });
    await expect(dora.api.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });
    // Her personal access token too; it and her impersonation token are listed as revoked.
    await expect(withPat.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });
    const listed = await admin.PersonalAccessTokens.all({ userId: dora.user.id });
    expect(listed.map((t) => [t.id, t.revoked, t.active])).toEqual(expect.arrayContaining([[pat.id, true, false]]));
    expect(listed.filter((t) => !t.revoked)).toEqual([]);
    await admin.Users.unblock(dora.user.id);
    expect(await admin.Users.show(dora.user.id)).toMatchObject({ state: 'active' });
    // The tokens the block ended stay ended.
    await expect(dora.api.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });
    await expect(withPat.Users.showCurrentUser()).rejects.toMatchObject({ cause: { response: { status: 401 } } });

    await admin.Users.deactivate(dora.user.id);
    expect(await admin.Users.show(dora.user.id)).toMatchObject({ state: 'deactivated' });
    await expect(admin.Users.unblock(dora.user.id)).rejects.toMatchObject({ cause: { response: { status: 403 } } });
    await admin.Users.activate(dora.user.id);
    expect(await admin.Users.show(dora.user.id)).toMatchObject({ state: 'active' });

    await admin.Users.remove(dora.user.id);
    await expect(admin.Users.show(dora.user.id)).rejects.toMatchObject({ cause: { response: { status: 404 } } });
  });

  it('reports the errors GitLab clients expect', async () => {
    const stranger = await userWithToken('stranger');
    const owner = await userWithToken('owen');
    const group = await owner.api.Groups.create('Private Co', 'private-co', { visibility: 'private' });
    await expect(stranger.api.GroupAccessRequests.all(group.id)).rejects.toMatchObject({ cause: { response: { status: 404 } } });
    const open = await owner.api.Groups.create('Open Co', 'open-co', { visibility: 'public' });
    await stranger.api.GroupAccessRequests.request(open.id);
    await expect(stranger.api.GroupAccessRequests.request(open.id)).rejects.toMatchObject({ cause: { response: { status: 400 } } });
    await expect(stranger.api.GroupAccessRequests.all(open.id)).rejects.toMatchObject({ cause: { response: { status: 403 } } });
  });
});
