import { nodeSqlStorage } from './sql-storage';

/**
 * A Durable Object namespace binding in Node (`getByName`): one object per name, made on first use
 * with its own in-memory database (./sql-storage.ts), an alarm and `ctx.id.name`. Calls are plain
 * method calls in one thread, one at a time: what workerd's RPC adds (copies of arguments,
 * concurrency between objects) is the worker project's to prove. An alarm is kept as the object
 * sets it (`getAlarm`, `setAlarm`, `deleteAlarm`) and never rings by itself: a test rings it by
 * calling the object's `alarm()`.
 */
export const objectsInNode = <T>(make: (ctx: DurableObjectState) => T) => {
  const made = new Map<string, T>();
  return {
    getByName(name: string): T {
      let object = made.get(name);
      if (!object) {
        let alarm: number | null = null;
        const storage = {
          ...nodeSqlStorage(),
          getAlarm: async () => alarm,
          setAlarm: async (at: number | Date) => {
            alarm = typeof at === 'number' ? at : at.getTime();
          },
          deleteAlarm: async () => {
            alarm = null;
          },
        };
        const ctx = { storage, id: { name, toString: () => name } };
        object = make(ctx as unknown as DurableObjectState);
        made.set(name, object);
      }
      return object;
    },
  };
};
