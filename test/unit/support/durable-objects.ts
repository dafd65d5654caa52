import { nodeSqlStorage } from './sql-storage';

/**
 * A Durable Object namespace binding in Node (`getByName`): one object per name, made on first use
 * with its own in-memory database (./sql-storage.ts), an alarm and `ctx.id.name`. Calls are plain
 * method calls in one thread, one at a time: what workerd's RPC adds (copies of arguments,
 * concurrency between objects) is the worker project's to prove. An alarm is kept as the object
 * sets it (`getAlarm`, `setAlarm`, `deleteAlarm`) and never rings by itself: a test rings it by
 * calling the object's `alarm()`. `restart` stands for a crash and a restart: the object is made
 * again on the same storage and alarm, with nothing of its memory.
 */
export const objectsInNode = <T>(make: (ctx: DurableObjectState) => T) => {
  const made = new Map<string, { object: T; ctx: DurableObjectState }>();
  return {
    getByName(name: string): T {
      let entry = made.get(name);
      if (!entry) {
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
        const ctx = { storage, id: { name, toString: () => name } } as unknown as DurableObjectState;
        entry = { object: make(ctx), ctx };
        made.set(name, entry);
      }
      return entry.object;
    },
    /** The object of `name` made again on its storage (a crash and a restart); no-op for one never made. */
    restart(name: string): void {
      const entry = made.get(name);
      if (entry) entry.object = make(entry.ctx);
    },
  };
};
