// A fresh Knock Worker (wrangler dev on a free port, state in a temporary directory) and the
// few API calls the end-to-end test makes as its administrator.

import { randomBytes } from 'node:crypto';
import { SYSTEM_TEST_VARS } from '../../scripts/support/server-vars';
import { startRequestLog, type RecordedRequest } from './request-log';
// @ts-expect-error: plain ESM module without types
import { startServer as startWrangler, ROOT as REPO_ROOT } from '../../../worker/dev/server.mjs';

export const ROOT: string = REPO_ROOT;

export interface RunningServer {
  url: string;
  adminToken: string;
  stop(): Promise<void>;
  output(): string;
}

export async function startKnock(stateDir: string, vars: Record<string, string> = {}): Promise<RunningServer> {
  const adminToken = `knock_admin_${randomBytes(18).toString('base64url')}`;
  const server = await startWrangler({
    persistTo: stateDir,
    vars: { ...SYSTEM_TEST_VARS, ADMIN_TOKEN: adminToken, TOKEN_HASH_KEY: randomBytes(24).toString('base64url'), ...vars },
  });
  return { url: server.url, adminToken, stop: () => server.stop(), output: () => server.output() };
}

/** A Knock server reached through a recording proxy (request-log.ts): `url` is the proxy's, and every request through it is in `requests`. */
export async function startRecordedKnock(stateDir: string): Promise<RunningServer & { requests: RecordedRequest[] }> {
  const log = await startRequestLog();
  try {
    const server = await startKnock(stateDir, { PUBLIC_URL: log.url });
    log.forwardTo(server.url);
    return { ...server, url: log.url, requests: log.requests, stop: () => server.stop().finally(log.close) };
  } catch (error) {
    await log.close();
    throw error;
  }
}

/** Calls `/api/v4` with a token and fails loudly on anything but the expected status. */
export async function callApi<T>(
  server: RunningServer,
  token: string,
  method: string,
  path: string,
  expectedStatus: number,
  body?: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(`${server.url}/api/v4${path}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status !== expectedStatus) {
    throw new Error(`${method} ${path}: expected ${expectedStatus}, got ${response.status} ${text}`);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
