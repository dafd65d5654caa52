import { runInDurableObject } from 'cloudflare:test';

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * A gate inside one Durable Object, so that a race's contenders reach the object's decision in
 * an order the test chooses, where workerd under test (one thread for the Worker and its
 * objects) gives them the same order every time. The object's methods are replaced on a
 * prototype put between the object and its class: RPC calls only methods found on a prototype
 * (workerd's rule, which `@cloudflare/vitest-plugin` applies too), and the object's calls of its
 * own methods find them there as well.
 *
 * - `hold(method, 'before' | 'after')`: each call of that async method waits, before it runs or
 *   once it has, until released. Calls are numbered in the order they are held, so a test that
 *   sends its contenders one after another, each once the one before is held (`held(n)`), knows
 *   whose each call is.
 * - `release(...n)`: those held calls go on, in that order.
 * - `releaseAfterNextTransaction(...n)`: they go on the moment the object's next transaction
 *   (`mutate`) commits, synchronously, before the object goes on: they reach the object between
 *   that transaction and whatever the object does after it.
 * - `open()`: the class's methods again, and every call still held goes on.
 *
 * Every step runs inside the object (`runInDurableObject`), and the test learns of a call held
 * through that call's answer: workerd lets a request's code do I/O only in its own context.
 */
export const objectGate = (stub: DurableObjectStub) => {
  const releases: (() => void)[] = [];
  const waiting = new Map<number, () => void>();
  const afterTransaction: number[][] = [];
  let classPrototype: object | null = null;

  const inside = <T>(step: (layer: Methods, classMethods: Methods) => T) =>
    runInDurableObject(stub, (instance) => {
      if (!classPrototype) {
        classPrototype = Object.getPrototypeOf(instance) as object;
        Object.setPrototypeOf(instance, Object.create(classPrototype) as object);
      }
      return step(Object.getPrototypeOf(instance) as Methods, classPrototype as Methods);
    });

  const park = (): Promise<void> =>
    new Promise((release) => {
      releases.push(release);
      waiting.get(releases.length - 1)?.();
    });
  const release = (ns: number[]) => {
    for (const n of ns) releases[n]();
  };

  return {
    hold: (method: string, at: 'before' | 'after') =>
      inside((layer, classMethods) => {
        const original = classMethods[method];
        layer[method] = async function (this: unknown, ...args: unknown[]) {
          if (at === 'before') await park();
          const result = await original.apply(this, args);
          if (at === 'after') await park();
          return result;
        };
      }),

    /** Once the n-th call (from 0) is held. */
    held: (n: number) => inside(() => (releases[n] ? undefined : new Promise<void>((resolve) => waiting.set(n, resolve)))),

    release: (...ns: number[]) => inside(() => release(ns)),

    releaseAfterNextTransaction: (...ns: number[]) =>
      inside((layer, classMethods) => {
        afterTransaction.push(ns);
        if (Object.hasOwn(layer, 'mutate')) return;
        layer.mutate = function (this: unknown, rule: unknown) {
          const result = classMethods.mutate.call(this, rule);
          const next = afterTransaction.shift();
          if (next) release(next);
          return result;
        };
      }),

    open: () =>
      runInDurableObject(stub, (instance) => {
        if (classPrototype) Object.setPrototypeOf(instance, classPrototype);
        for (const r of releases) r();
      }),
  };
};
