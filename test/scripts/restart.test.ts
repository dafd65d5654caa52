import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebBrowser } from './support/web-client.mjs';
// @ts-expect-error: plain ESM module without types
import { freePort, ROOT } from '../../worker/dev/server.mjs';

/** Runs `npm start` in its own process group until it prints its banner. */
const npmStart = (env: Record<string, string>) =>
  new Promise<{ output: string; stop: () => Promise<void> }>((resolve, reject) => {
    const child = spawn('npm', ['start'], { cwd: ROOT, detached: true, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const stop = () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        process.kill(-child.pid!, 'SIGTERM');
      });
    child.stdout.on('data', (d) => {
      output += d;
      if (output.includes('Press Ctrl+C to stop.')) resolve({ output, stop });
    });
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}) before it was ready:\n${output}`)));
  });

describe('npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-start-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes .dev.vars once, prints the admin token and the demo accounts that can sign in, and keeps state across a restart', async () => {
    const port = String(await freePort());
    const env = { PORT: port, KNOCK_DEV_VARS: join(dir, '.dev.vars'), KNOCK_STATE_DIR: join(dir, 'state') };
    const url = `http://127.0.0.1:${port}`;

    const first = await npmStart(env);
    const token = /ADMIN_TOKEN="([^"]+)"/.exec(readFileSync(env.KNOCK_DEV_VARS, 'utf8'))![1];
    let userId: number;
    try {
      expect(first.output).toContain(`Knock is running at ${url}`);
      expect(first.output).toContain(`Admin token:  ${token}`);
      for (const demoUser of ['alice', 'bob', 'carol', 'grace']) expect(first.output).toMatch(new RegExp(`${demoUser} +password \\S+`));
      // grace, the demo administrator, signs in to the console's Admin area with her printed password.
      const grace = /grace +password (\S+)/.exec(first.output)![1]!;
      expect(first.output).toMatch(/grace .*\(administrator\)/);
      const web = new WebBrowser(() => url);
      expect((await web.signIn('grace', grace)).status).toBe(303);
      expect((await web.get('/admin/users')).status).toBe(200);
      expect((await fetch(`${url}/users/sign_in`)).status).toBe(200);
      const res = await fetch(`${url}/api/v4/users`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'survivor', name: 'Survivor', password: 'still-here-after-restart' }),
      });
      expect(res.status).toBe(201);
      userId = ((await res.json()) as { id: number }).id;
      // carol is blocked: she can no longer sign in, so the next banner leaves her out.
      const [carol] = (await (await fetch(`${url}/api/v4/users?username=carol`, { headers: { 'PRIVATE-TOKEN': token } })).json()) as { id: number }[];
      expect((await fetch(`${url}/api/v4/users/${carol!.id}/block`, { method: 'POST', headers: { 'PRIVATE-TOKEN': token } })).status).toBe(201);
    } finally {
      await first.stop();
    }

    const second = await npmStart(env);
    try {
      expect(second.output).toContain(`Admin token:  ${token}`);
      // The demo accounts are printed again, with the same passwords.
      const alice = (output: string) => /alice +password (\S+)/.exec(output)?.[1];
      expect(alice(second.output)).toBe(alice(first.output));
      expect(second.output).not.toMatch(/carol +password/);
      const acme = await fetch(`${url}/api/v4/groups/acme/access_requests`, { headers: { 'PRIVATE-TOKEN': token } });
      expect(((await acme.json()) as { username: string }[]).map((r) => r.username)).toEqual(['bob']);
      const res = await fetch(`${url}/api/v4/users?username=survivor`, { headers: { 'PRIVATE-TOKEN': token } });
      expect(await res.json()).toEqual([expect.objectContaining({ id: userId, username: 'survivor' })]);
    } finally {
      await second.stop();
    }
  });
});
