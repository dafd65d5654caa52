// A fresh Knock Worker (wrangler dev on a free port, state in a temporary directory), the system
// run's shared one, and the few API calls the end-to-end tests make as its administrator.

import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { SYSTEM_TEST_VARS } from '../../scripts/support/server-vars';
import { startRequestLog, type RecordedRequest } from './request-log';
// @ts-expect-error: plain ESM module without types
import { startServer as startWrangler, ROOT as REPO_ROOT } from '../../../worker/dev/server.mjs';

export const ROOT: string = REPO_ROOT;

/** Where a Knock server answers, and its administrator's token (ADMIN_TOKEN). */
export interface KnockAddress {
  url: string;
  adminToken: string;
}

export interface RunningServer extends KnockAddress {
  stop(): Promise<void>;
  output(): string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Given by the system project's global setup (shared-knock.ts). */
    sharedKnock: KnockAddress;
  }
}

/** The server the system run shares (shared-knock.ts); a file never stops it. */
export const sharedKnock = (): KnockAddress => inject('sharedKnock');

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

/**
 * The system run's shared server behind a proxy of the caller's own (request-log.ts): its address
 * stops answering when `stop` closes the proxy, as a stopped server's would, and the shared
 * server runs on for the other files.
 */
export async function sharedKnockBehindProxy(): Promise<RunningServer> {
  const shared = sharedKnock();
  const proxy = await startRequestLog();
  proxy.forwardTo(shared.url);
  return { url: proxy.url, adminToken: shared.adminToken, stop: proxy.close, output: () => '' };
}

/** Calls `/api/v4` with a token and fails loudly on anything but the expected status. */
export async function callApi<T>(
  server: KnockAddress,
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

/** Someone with an account: what they sign in with, and what they are called. */
export interface Person {
  username: string;
  password: string;
  name: string;
}

/** Creates `person` (an administrator when `admin`) and an impersonation token for them, as the administrator does with GitLab's API. */
export async function createUser(server: KnockAddress, person: Person, { admin = false } = {}): Promise<{ id: number; token: string }> {
  const user = await callApi<{ id: number }>(server, server.adminToken, 'POST', '/users', 201, {
    ...person,
    email: `${person.username}@example.test`,
    admin,
  });
  const { token } = await callApi<{ token: string }>(server, server.adminToken, 'POST', `/users/${user.id}/impersonation_tokens`, 201, {
    name: 'e2e',
    scopes: ['api'],
  });
  return { id: user.id, token };
}
