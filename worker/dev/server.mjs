// Starts the Worker locally with `wrangler dev` in its own process group, and stops the whole
// group (wrangler and workerd) when asked. Used by `npm start` and by the system tests.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WRANGLER = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const waitForExit = (child, ms) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/**
 * @param {{ port?: number, persistTo: string, vars?: Record<string,string>, stdio?: 'inherit'|'pipe'|'ignore', readyTimeoutMs?: number }} options
 */
export async function startServer({ port, persistTo, vars = {}, stdio = 'pipe', readyTimeoutMs = 90_000 }) {
  port ??= await freePort();
  const inspectorPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    WRANGLER, 'dev',
    '--ip', '127.0.0.1',
    '--port', String(port),
    '--inspector-port', String(inspectorPort),
    '--persist-to', persistTo,
    '--show-interactive-dev-session=false',
    // Local development sends webhooks to local receivers (127.0.0.1); deployments do not. Nothing
    // in front of wrangler dev sets the client's address (it keeps a CF-Connecting-IP a client sent).
    ...Object.entries({ PUBLIC_URL: url, ALLOW_LOCAL_WEBHOOKS: 'true', CLIENT_ADDRESS_HEADER: '', ...vars }).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', stdio, stdio],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: 'false',
      // No internet here: skip wrangler's download of the `Request.cf` sample.
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      WRANGLER_LOG: process.env.WRANGLER_LOG ?? 'warn', FORCE_COLOR: '0' },
  });
  let output = '';
  if (stdio === 'pipe') {
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
  }

  const stop = async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      return;
    }
    if (!(await waitForExit(child, 10_000))) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
      await waitForExit(child, 5_000);
    }
  };

  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/api/v4/version`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 401 || res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop('SIGKILL');
      throw new Error(`wrangler dev did not answer on ${url} within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, port, pid: child.pid, child, stop, output: () => output };
}
