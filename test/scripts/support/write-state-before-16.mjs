// Writes test/scripts/fixtures/state-before-16: the local state (wrangler dev --persist-to) of
// the version before sign-in moved out of the Directory, with users, a renamed user, a group and
// project, a member and a pending request, and what the upgrade test needs to use them
// (state-before-16.json). Nothing in it expires: tokens (30 days) and browser sessions (7 days)
// would, so the test issues its own tokens after the update with the fixture's ADMIN_TOKEN. Run once, against a checkout of that version:
//
//   git archive 9aa5e74 | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   npx node test/scripts/support/write-state-before-16.mjs /tmp/before   (Node 22.5 or later)
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { formSession } from './form-session.mjs';

const before = process.argv[2];
if (!before) throw new Error('usage: write-state-before-16.mjs <checkout of the version before>');
const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const stateDir = join(fixtures, 'state-before-16');
rmSync(stateDir, { recursive: true, force: true });
mkdirSync(stateDir, { recursive: true });

const VARS = { ADMIN_TOKEN: 'upgrade-admin-token', TOKEN_HASH_KEY: 'upgrade-token-hash-key' };
const { startServer } = await import(join(before, 'worker', 'dev', 'server.mjs'));
const server = await startServer({ persistTo: stateDir, vars: VARS });
try {
  const api = async (method, path, token, body) => {
    const res = await fetch(`${server.url}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const user = async (username) => {
    const password = `${username}-password-before`;
    const { id } = await api('POST', '/users', VARS.ADMIN_TOKEN, { username, name: `${username} before`, password });
    return { id, username, password };
  };
  const owner = await user('owner16');
  const requester = await user('requester16');
  const member = await user('member16');
  const renamed = await user('renamed16');
  await api('PUT', `/users/${renamed.id}`, VARS.ADMIN_TOKEN, { username: 'renamedafter16' });
  const { token } = await api('POST', `/users/${owner.id}/impersonation_tokens`, VARS.ADMIN_TOKEN, { name: 'before', scopes: ['api'] });
  const group = await api('POST', '/groups', token, { name: 'Before', path: 'before16', visibility: 'public' });
  const project = await api('POST', '/projects', token, { name: 'Site', path: 'site', namespace_id: group.id, visibility: 'public' });
  await api('POST', `/groups/${group.id}/members`, token, { user_id: member.id, access_level: 40 });
  const { token: requesterToken } = await api('POST', `/users/${requester.id}/impersonation_tokens`, VARS.ADMIN_TOKEN, { name: 'before', scopes: ['api'] });
  await api('POST', `/projects/${project.id}/access_requests`, requesterToken);
  const signedIn = await formSession(server.url).signIn(owner.username, owner.password);
  if (signedIn.status !== 303) throw new Error(`sign-in before: ${signedIn.status}`);
  writeFileSync(
    join(fixtures, 'state-before-16.json'),
    `${JSON.stringify(
      {
        vars: VARS,
        owner,
        requester,
        member,
        renamed: { ...renamed, username: 'renamedafter16', formerUsername: renamed.username },
        group: { id: group.id },
        project: { id: project.id },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await server.stop();
}

// Only the Durable Objects and KV are state; each SQLite file is checkpointed into one file.
for (const name of readdirSync(join(stateDir, 'v3'))) if (!['do', 'kv'].includes(name)) rmSync(join(stateDir, 'v3', name), { recursive: true });
const files = (d) => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
for (const file of files(stateDir).filter((f) => f.endsWith('.sqlite'))) {
  const db = new DatabaseSync(file);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;');
  db.close();
}
for (const file of files(stateDir).filter((f) => f.endsWith('-wal') || f.endsWith('-shm'))) rmSync(file);
