// Changes to stored values, one after another per value, each reading what the one before wrote.
// The background is the only writer of what it owns, so ordering its own changes is enough for
// records keyed by server to lose no entry when two servers are updated at once.

import type { WxtStorageItem } from 'wxt/utils/storage';

const queues = new WeakMap<object, Promise<unknown>>();

export function updateStored<T>(item: WxtStorageItem<T, any>, change: (value: T) => T | Promise<T>): Promise<T> {
  const write = (queues.get(item) ?? Promise.resolve()).then(async () => {
    const next = await change(await item.getValue());
    await item.setValue(next);
    return next;
  });
  queues.set(item, write.catch(() => undefined));
  return write;
}

/** Sets one server's entry of a record keyed by server. */
export const setEntry = <T>(item: WxtStorageItem<Record<string, T>, any>, serverUrl: string, value: T) =>
  updateStored(item, (record) => ({ ...record, [serverUrl]: value }));

/** Removes one server's entry of a record keyed by server. */
export const removeEntry = <T>(item: WxtStorageItem<Record<string, T>, any>, serverUrl: string) =>
  updateStored(item, ({ [serverUrl]: _removed, ...others }) => others);
