import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { app } from '../../../worker/app';
import type { Env } from '../../../worker/env';
import { recordingBindings } from './recording-bindings';

/** One call the Worker made to a Durable Object: its class, the name it was reached by, the method. */
export interface ObjectCall {
  cls: string;
  key: string;
  method: string;
}

/** The Durable Object bindings, by the class each one reaches. */
const BINDINGS = {
  DIRECTORY: 'Directory',
  USERS: 'User',
  NAMESPACES: 'Namespace',
  AUDIT_LOG: 'AuditLog',
  CLIENT_HOLDERS: 'ClientHolders',
  SIGN_IN: 'SignIn',
  INDEX_PARTITIONS: 'IndexPartition',
  SIGNING_KEYS: 'SigningKeys',
  DEVICE_AUTHORIZATIONS: 'DeviceAuthorizations',
} as const;

/** `env` with every Durable Object binding wrapped to report each method call made through `getByName`. */
const recordingEnv = (record: (call: ObjectCall) => void): Env =>
  recordingBindings(env, (binding) => Reflect.get(BINDINGS, binding) ?? binding, (cls, key, method) => record({ cls, key, method }));

/**
 * Sends one request (path relative to the origin) to the app with recording bindings, and waits
 * for the work it left to `waitUntil`: the Durable Object calls the Worker made for it, in order.
 * Calls that objects make to each other are not seen here.
 */
export const recordedFetch = async (path: string, init: RequestInit = {}) => {
  const calls: ObjectCall[] = [];
  const ctx = createExecutionContext();
  const response = await app.fetch(new Request(`http://knock.test${path}`, init), recordingEnv((c) => calls.push(c)), ctx);
  const body = await response.text();
  await waitOnExecutionContext(ctx);
  const nullBody = response.status === 204 || response.status === 304;
  return { response: new Response(nullBody ? null : body, { status: response.status, headers: response.headers }), calls };
};

/**
 * Calls the app (path relative to /api/v4) with its Durable Object bindings wrapped to record
 * which object methods the Worker calls, as `Directory.method` and `Namespace.method`.
 */
export const counted = async (path: string, headers: Record<string, string>, method = 'GET') => {
  const { response, calls } = await recordedFetch(`/api/v4${path}`, { method, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null, calls: calls.map((c) => `${c.cls}.${c.method}`) };
};

/** The calls that reached a group's or project's object. */
export const namespaceCalls = (calls: string[]) => calls.filter((c) => c.startsWith('Namespace.'));
