import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, sharedKnock } from './support/knock-server';

// Debian's python3-gitlab, as a Python user would run it: the system interpreter, not a pyenv one
// (or PYTHON).
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const SCRIPT = join(ROOT, 'test', 'e2e', 'support', 'python_gitlab_flow.py');

describe('python-gitlab against Knock', () => {
  const server = sharedKnock();

  it('adds, edits and removes members; makes and uses a personal access token; edits, blocks, unblocks, deactivates, activates and deletes a user', async () => {
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT], {
      env: { ...process.env, KNOCK_URL: server.url, KNOCK_ADMIN_TOKEN: server.adminToken, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
      timeout: 90_000,
    });
    const seen = JSON.parse(stdout) as Record<string, unknown> & { dates: [string, string]; bob_id: number };
    expect(seen.python_gitlab).toMatch(/^3\./);
    const [in30, in60] = seen.dates;

    for (const kind of ['group_members', 'project_members']) {
      expect(seen[kind], kind).toEqual({ added: ['py-bob', 30, in30], edited: [40, in60], after_removal: ['py-alice'] });
    }
    expect(seen.personal_access_token).toEqual({
      created: { name: 'py-ci', scopes: ['api', 'read_user'], active: true, revoked: false, expires_at: in30, user_id: seen.bob_id },
      private_token_user: 'py-bob',
      bearer_user: 'py-bob',
      listed_by_admin: ['py-ci'],
      listed_by_bob: expect.arrayContaining([true]),
      own: { scopes: ['read_api'], user_id: seen.bob_id },
      after_revocation: 401,
    });
    // Carol's lifecycle: a block ends her impersonation token and her personal access token
    // (401), and unblocking does not bring them back.
    expect(seen.lifecycle).toEqual({
      renamed: 'Carol Renamed',
      pat_before: 'works',
      block: true,
      state: 'blocked',
      block_again: null,
      after_block: [401, 401],
      listed_blocked: { carol: true, states: ['blocked'] },
      pat_after_block: [{ revoked: true, active: false }],
      unblock: true,
      after_unblock: [401, 401],
      deactivate: true,
      deactivated_state: 'deactivated',
      activate: true,
      deleted: 404,
    });
  });
});
