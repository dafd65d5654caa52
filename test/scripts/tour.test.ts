// The README's "Five minutes with Knock", followed in order on a fresh server with `npm start`'s
// demo data: its shell blocks run as written (the tokens put in for the `…` placeholders, the
// receiver on a free port instead of 9000), and the steps done in a browser are done as a user
// does them: step 1 in the console in Chromium, step 5 through the API calls the popup makes,
// step 8's page in Apache through a cookie-keeping HTTP client (e2e/support/navigating-browser.ts).
// Every curl must answer 2xx, or the 401 its comment promises.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchPlain } from '../e2e/support/chromium';
import { seedDemo, type DemoUser } from '../e2e/support/demo';
import { callApi, ROOT, startKnock, type RunningServer } from '../e2e/support/knock-server';
import { NavigatingBrowser } from '../e2e/support/navigating-browser';
import { eventually } from '../e2e/support/webhook-receiver';
// @ts-expect-error: plain ESM module without types
import { freePort } from '../../worker/dev/server.mjs';

/** The tour's shell blocks, in order, with the step each belongs to. */
function tourBlocks(): { step: number; code: string }[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Five minutes with Knock');
  const tour = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const blocks: { step: number; code: string }[] = [];
  let step = 0;
  for (const part of tour.split(/(```sh\n[\s\S]*?```)/)) {
    if (part.startsWith('```sh')) blocks.push({ step, code: part.slice(6, -3) });
    else for (const m of part.matchAll(/\*\*(\d+)\. /g)) step = Number(m[1]);
  }
  return blocks;
}

describe("the README's tour, in order", () => {
  const dir = mkdtempSync(join(tmpdir(), 'knock-tour-'));
  let server: RunningServer;
  let demo: Record<'alice' | 'bob' | 'carol', DemoUser>;
  /** Variables the blocks set so far, as one terminal keeps them. */
  let shellVars: Record<string, string> = {};
  let receiver: { output: () => string; stop: () => void } | undefined;
  let receiverPort: number;
  let apachePort: number;
  let apache: { stop: () => void } | undefined;

  beforeAll(async () => {
    server = await startKnock(join(dir, 'state'));
    demo = await seedDemo(server);
    writeFileSync(join(dir, '.dev.vars'), `ADMIN_TOKEN="${server.adminToken}"\n`);
    receiverPort = await freePort();
    apachePort = await freePort();
  });
  afterAll(async () => {
    receiver?.stop();
    apache?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A block as the reader would paste it, against this server and receiver. */
  const asPasted = (code: string) =>
    code
      .replace('export KNOCK=http://127.0.0.1:8787', `export KNOCK=${server.url}`)
      .replaceAll('9000', String(receiverPort))
      .replaceAll('8090', String(apachePort))
      .replace('KNOCK_URL=http://127.0.0.1:8787', `KNOCK_URL=${server.url}`)
      .replaceAll('$PWD/docs/', `${ROOT}/docs/`)
      .replace(/\b(ALICE|BOB|CAROL)=(?:knock_at_)?…/g, (_, name: string) => `${name}=${demo[name.toLowerCase() as 'alice'].token}`);

  /** Runs one block in bash as a terminal would (keeping its variables); answers curl's statuses and the output. */
  const run = (code: string) => {
    const script = [
      'set -a -e -o pipefail',
      // Each curl's status, on stderr so that `$(curl …)` captures only the body.
      `curl() { command curl -w '%{stderr}HTTP %{http_code}\\n' "$@"; }`,
      asPasted(code),
      'env -0 > "$KNOCK_TOUR_ENV"',
    ].join('\n');
    const envFile = join(dir, 'env');
    const result = spawnSync('bash', ['-c', script], { cwd: dir, env: { ...process.env, ...shellVars, KNOCK_TOUR_ENV: envFile }, encoding: 'utf8' });
    expect(result.status, `${code}\n${result.stdout}\n${result.stderr}`).toBe(0);
    const after = Object.fromEntries(readFileSync(envFile, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    shellVars = Object.fromEntries(Object.entries(after).filter(([k, v]) => process.env[k] !== v && k !== 'KNOCK_TOUR_ENV' && k !== '_'));
    const statuses = [...result.stderr.matchAll(/^HTTP (\d+)$/gm)].map((m) => Number(m[1]));
    // One curl per line that names it; `# 401` in its comment is the answer the README promises.
    const expected = code.split('\n').filter((l) => /\bcurl\b/.test(l)).map((l) => (/# 401/.test(l) ? 401 : 'ok'));
    expect(statuses.map((s) => (s >= 200 && s < 300 ? 'ok' : s)), `${code}\n${result.stdout}\n${result.stderr}`).toEqual(expected);
    return result.stdout;
  };

  const blocks = tourBlocks();
  const stepBlocks = (step: number) => blocks.filter((b) => b.step === step);

  it('1. alice approves bob on acme/website from her dashboard', async () => {
    const browser = await launchPlain();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/users/sign_in`);
      await page.getByLabel('Username').fill('alice');
      await page.getByLabel('Password').fill(demo.alice.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Needs you (4)' }).waitFor();
      await page.getByRole('listitem', { name: 'Bob Builder (@bob) for acme/website' }).getByRole('button', { name: 'Approve @bob' }).click();
      await page.getByRole('status').getByText(/^Approved @bob as Developer on acme\/website/).waitFor();
    } finally {
      await browser.close();
    }
  });

  it('2. root calls the API', () => {
    const [block] = stepBlocks(2);
    const output = run(block!.code);
    expect(output).toContain('"username":"root"');
  });

  it('3. a receiver prints the webhook deliveries of carol withdrawing, asking again and being approved', async () => {
    const [receiverBlock, calls] = stepBlocks(3);
    const child = spawn('bash', ['-c', asPasted(receiverBlock!.code)], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    child.stdout.on('data', (d) => (printed += d));
    receiver = { output: () => printed, stop: () => child.exitCode === null && process.kill(-child.pid!, 'SIGTERM') };
    // The receiver listens once a connection is accepted on its port.
    await eventually('the receiver to listen', () => fetch(`http://127.0.0.1:${receiverPort}/`, { method: 'POST', body: '{}' }).then(() => true, () => undefined));

    run(calls!.code);
    const lines = await eventually('the approval to be delivered', () => {
      const seen = printed.split('\n').filter((l) => l.endsWith(' carol'));
      return seen.some((l) => l.includes('user_add_to_team')) ? seen : undefined;
    });
    expect(lines.map((l) => l.split(' ')[1])).toEqual(expect.arrayContaining(['user_access_request_to_project', 'user_add_to_team']));
  });

  it('5. alice approves bob and denies carol on acme, as the popup does; the check shows it', async () => {
    // Step 4 builds and loads the extension (test/e2e/extension-*.test.ts do that); its popup
    // lists the requests left, and its Approve and Deny are these calls.
    const waiting = await callApi<{ id: number; username: string }[]>(server, demo.alice.token, 'GET', '/access_requests', 200);
    expect(waiting.map((r) => r.username).sort()).toEqual(['bob', 'carol']);
    const id = (u: string) => waiting.find((r) => r.username === u)!.id;
    await callApi(server, demo.alice.token, 'PUT', `/groups/acme/access_requests/${id('bob')}/approve`, 201, { access_level: 30 });
    await callApi(server, demo.alice.token, 'DELETE', `/groups/acme/access_requests/${id('carol')}`, 204);

    const output = run(stepBlocks(5).map((b) => b.code).join('\n'));
    expect(output).toContain('"username":"bob"');
    expect(output).toMatch(/\[\]\s*$/);
  });

  it('6. bob makes a token for a script, uses and revokes it', () => {
    for (const block of stepBlocks(6)) run(block.code);
  });

  it('7. root blocks carol, whose token stops working', () => {
    for (const block of stepBlocks(7)) run(block.code);
  });

  it.skipIf(!existsSync('/usr/sbin/apache2'))('8. Apache greets bob, signed in with Knock, until alice removes him from acme', async () => {
    const [register, start, remove] = stepBlocks(8);
    run(register!.code);
    const child = spawn('bash', ['-c', `PATH=/usr/sbin:$PATH\n${asPasted(start!.code)}`], { cwd: dir, detached: true, stdio: 'ignore', env: { ...process.env, ...shellVars } });
    apache = { stop: () => child.exitCode === null && process.kill(-child.pid!, 'SIGTERM') };
    const site = `http://127.0.0.1:${apachePort}`;
    await eventually('Apache to listen', () => fetch(`${site}/`).then(() => true, () => undefined));
    // bob in a private window: signed in with Knock, greeted.
    const bob = new NavigatingBrowser();
    const welcomed = await bob.open(`${site}/protected/`, { username: 'bob', password: demo.bob.password });
    expect(welcomed.status).toBe(200);
    expect(welcomed.body).toContain('Hello bob!');

    run(remove!.code);
    await eventually('Apache to send bob back to Knock', async () => ((await bob.request(`${site}/protected/`)).status === 302 ? true : undefined));
    expect((await bob.open(`${site}/protected/`, { username: 'bob', password: demo.bob.password })).status).toBe(401);
  });

  it('has every block of the tour run above', () => {
    expect(blocks.map((b) => b.step)).toEqual([2, 3, 3, 4, 5, 6, 7, 8, 8, 8]);
  });
});
