// Bench-only: Knock's app with its storage bindings wrapped to count round trips, bound to the
// same Durable Objects and KV namespace as the measured Worker (so it sees the same state). The
// bench sends one request of each scenario here and reports `KV n, DO n` per request.
import { app } from '../../worker/app';
import type { Env } from '../../worker/env';

type Counts = { kv: string[]; do: string[] };

const countKv = (kv: KVNamespace, counts: Counts): KVNamespace =>
  new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counts.kv.push(String(prop));
        return Reflect.apply(value, target, args);
      };
    },
  });

const countStub = (stub: DurableObjectStub, binding: string, counts: Counts) =>
  new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        counts.do.push(`${binding}.${prop}`);
        return Reflect.apply(value, target, args);
      };
    },
  });

const countNamespace = (ns: DurableObjectNamespace, binding: string, counts: Counts): DurableObjectNamespace =>
  new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      if (prop === 'getByName' || prop === 'get') {
        return (...args: unknown[]) => countStub(Reflect.apply(value, target, args), binding, counts);
      }
      return value.bind(target);
    },
  });

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const counts: Counts = { kv: [], do: [] };
    const counted: Env = {
      ...env,
      TOKENS: countKv(env.TOKENS, counts),
      DIRECTORY: countNamespace(env.DIRECTORY, 'Directory', counts) as Env['DIRECTORY'],
      USERS: countNamespace(env.USERS, 'User', counts) as Env['USERS'],
      NAMESPACES: countNamespace(env.NAMESPACES, 'Namespace', counts) as Env['NAMESPACES'],
      CLIENT_HOLDERS: countNamespace(env.CLIENT_HOLDERS, 'ClientHolders', counts) as Env['CLIENT_HOLDERS'],
      AUDIT_LOG: countNamespace(env.AUDIT_LOG, 'AuditLog', counts) as Env['AUDIT_LOG'],
    };
    const response = await app.fetch(request, counted, ctx);
    const headers = new Headers(response.headers);
    headers.set('x-bench-round-trips', JSON.stringify(counts));
    return new Response(response.body, { status: response.status, headers });
  },
};
