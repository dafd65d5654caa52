// What the crash tests share: the real local server (`npm start`'s wrangler dev and workerd) they
// kill with SIGKILL and start again on the same state, and a small client of its API.
// @ts-expect-error: plain ESM module without types
import { freePort as freePortUntyped, startServer as startServerUntyped } from '../../../worker/dev/server.mjs';
import { SYSTEM_TEST_VARS } from './server-vars';

export interface Server {
  url: string;
  pid: number;
  child: { once: (event: string, cb: () => void) => void; exitCode: number | null; signalCode: string | null };
  stop: (signal?: string) => Promise<void>;
}

export const freePort: () => Promise<number> = freePortUntyped;

export const startServer = (options: { port: number; persistTo: string; vars: Record<string, string> }): Promise<Server> =>
  startServerUntyped({ ...options, vars: { ...SYSTEM_TEST_VARS, ...options.vars } });

/** An answer: its status and its JSON body (null when empty). */
export interface Answer {
  status: number;
  body: any; // the tests read fields of GitLab's JSON freely
}

/**
 * A client of /api/v4 at the server's current address (read on every call, as a restart may
 * move it), authenticated with `PRIVATE-TOKEN`; each call gives up after 15 s.
 */
export const apiClient =
  (baseUrl: () => string) =>
  async (method: string, path: string, token: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${baseUrl()}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

/** Calls `fn` on each item, `width` at a time (a server on a shared machine, not a queue of hundreds). */
export async function inParallel<T>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
