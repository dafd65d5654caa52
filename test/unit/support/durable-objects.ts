import { nodeSqlStorage } from './sql-storage';

/**
 * A Durable Object namespace binding in Node (`getByName`): one object per name, made on first use
 * with its own in-memory database (./sql-storage.ts) and `ctx.id.name`. Calls are plain method
 * calls in one thread, one at a time: what workerd's RPC adds (copies of arguments, concurrency
 * between objects) is the worker project's to prove.
 */
export const objectsInNode = <T>(make: (ctx: DurableObjectState) => T) => {
  const made = new Map<string, T>();
  return {
    getByName(name: string): T {
      let object = made.get(name);
      if (!object) {
        const ctx = { storage: nodeSqlStorage(), id: { name, toString: () => name } };
        object = make(ctx as unknown as DurableObjectState);
        made.set(name, object);
      }
      return object;
    },
  };
};
