import type { Env } from '../../../worker/env';

/**
 * `env` with every Durable Object binding (anything with `getByName`) wrapped so that each method
 * called on an object reached through it is reported, by the binding's class, the name the object
 * was reached by and the method. Used by the object-call tests (support/counted.ts) and by the
 * bench's counting build (bench/counted/worker.ts).
 */
export const recordingBindings = (env: Env, classOf: (binding: string) => string, record: (cls: string, name: string, method: string) => void): Env => {
  const wrapped: Record<string, unknown> = { ...env };
  for (const [binding, value] of Object.entries(env)) {
    if (!isNamespace(value)) continue;
    const cls = classOf(binding);
    wrapped[binding] = new Proxy(value, {
      get(target, prop) {
        const member = Reflect.get(target, prop);
        if (prop !== 'getByName') return typeof member === 'function' ? member.bind(target) : member;
        return (name: string) =>
          new Proxy(target.getByName(name), {
            get(stub, method) {
              const fn = Reflect.get(stub, method);
              if (typeof fn !== 'function' || typeof method !== 'string') return fn;
              return (...args: unknown[]) => {
                record(cls, name, method);
                return Reflect.apply(fn, stub, args);
              };
            },
          });
      },
    });
  }
  return wrapped as unknown as Env;
};

const isNamespace = (value: unknown): value is DurableObjectNamespace =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'getByName') === 'function';
