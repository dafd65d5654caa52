import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { app } from '../../../worker/app';
import type { Env } from '../../../worker/env';

/**
 * Calls the app (path relative to /api/v4) with its Durable Object bindings wrapped to record
 * which object methods the Worker calls, as `Directory.method` and `Namespace.method`.
 */
export const counted = async (path: string, headers: Record<string, string>, method = 'GET') => {
  const calls: string[] = [];
  const wrap = (ns: DurableObjectNamespace, label: string) =>
    new Proxy(ns, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== 'getByName') return typeof value === 'function' ? value.bind(target) : value;
        return (name: string) =>
          new Proxy(target.getByName(name), {
            get(stub, method) {
              const fn = Reflect.get(stub, method);
              if (typeof fn !== 'function' || typeof method !== 'string') return fn;
              return (...args: unknown[]) => {
                calls.push(`${label}.${method}`);
                return Reflect.apply(fn, stub, args);
              };
            },
          });
      },
    });
  const countedEnv = {
    ...env,
    DIRECTORY: wrap(env.DIRECTORY as unknown as DurableObjectNamespace, 'Directory'),
    NAMESPACES: wrap(env.NAMESPACES as unknown as DurableObjectNamespace, 'Namespace'),
  } as unknown as Env;
  const response = await app.fetch(new Request(`http://knock.test/api/v4${path}`, { method, headers }), countedEnv, createExecutionContext());
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null, calls };
};

/** The calls that reached a group's or project's object. */
export const namespaceCalls = (calls: string[]) => calls.filter((c) => c.startsWith('Namespace.'));
