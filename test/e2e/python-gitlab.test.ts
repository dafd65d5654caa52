import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module without types
import { startServer } from '../../worker/dev/server.mjs';

// python-gitlab (Debian's python3-gitlab), unmodified, pointed at Knock: the script below is
// python-gitlab's own API, nothing Knock-specific.
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const ADMIN_TOKEN = 'python-gitlab-admin-token';

const run = promisify(execFile);

/** Runs a python-gitlab script with the server's URL and the admin token; returns what it printed as JSON. */
const python = async (url: string, script: string): Promise<Record<string, unknown>> => {
  const { stdout } = await run(PYTHON, ['-c', script], { env: { ...process.env, KNOCK_URL: url, ADMIN_TOKEN }, timeout: 60_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
};

describe('python-gitlab against Knock', () => {
  const state = mkdtempSync(join(tmpdir(), 'knock-python-gitlab-'));
  let server: { url: string; stop: () => Promise<void> };

  beforeAll(async () => {
    server = await startServer({ persistTo: state, vars: { ADMIN_TOKEN, TOKEN_HASH_KEY: 'python-gitlab-hash-key' } });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('edits, blocks, unblocks, deactivates, activates and deletes a user; the blocked user\'s token stops working', async () => {
    const out = await python(
      server.url,
      `
import json, os, gitlab
url, out = os.environ['KNOCK_URL'], {}
gl = gitlab.Gitlab(url, private_token=os.environ['ADMIN_TOKEN'])
user = gl.users.create({'username': 'pyuser', 'name': 'Py User', 'password': 'py-user-password', 'email': 'py@example.com'})
token = user.impersonationtokens.create({'name': 'py', 'scopes': ['api']}).token
mine = gitlab.Gitlab(url, private_token=token)
user.name = 'Py Renamed'
user.save()
mine.auth()
out['renamed'] = mine.user.name
out['block'] = user.block()
out['state'] = gl.users.get(user.id).state
out['block_again'] = user.block()
try:
    mine.auth()
    out['after_block'] = 'works'
except gitlab.GitlabAuthenticationError as e:
    out['after_block'] = e.response_code
out['unblock'] = user.unblock()
out['deactivate'] = user.deactivate()
out['activate'] = user.activate()
out['listed_blocked'] = [u.username for u in gl.users.list(blocked=True)]
gl.users.delete(user.id)
try:
    gl.users.get(user.id)
except gitlab.GitlabGetError as e:
    out['deleted'] = e.response_code
print(json.dumps(out))
`,
    );
    expect(out).toEqual({
      renamed: 'Py Renamed',
      block: true,
      state: 'blocked',
      block_again: null,
      after_block: 401,
      unblock: true,
      deactivate: true,
      activate: true,
      listed_blocked: [],
      deleted: 404,
    });
  });
});
