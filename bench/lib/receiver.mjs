// Starts the bench's webhook receiver (bench/receiver/server.mjs) as a child process on
// 127.0.0.1, and steers and reads it over HTTP.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { BENCH } from './paths.mjs';

export async function startReceiver() {
  const child = fork(join(BENCH, 'receiver', 'server.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the webhook receiver exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    /** Paths whose first segment is in `prefixes` are answered 503 from now on. */
    fail: async (prefixes) => {
      await fetch(`${url}/_control`, { method: 'POST', body: JSON.stringify({ failing: prefixes }) });
    },
    /** When each successful delivery under `/prefix/` arrived (epoch ms), oldest first. */
    delivered: async (prefix) => (await fetch(`${url}/_stats?prefix=${encodeURIComponent(prefix)}`)).json(),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}
