import type { NamespaceRow } from '../durable/namespace-registry';

/** A group or project as the Directory's path registry has it. */
export interface RegistryRecord {
  namespace: NamespaceRow;
  /** Ancestor ids, nearest first. */
  ancestorIds: number[];
}

/** Records kept per isolate; each is reachable by id and by full path. */
const CAPACITY = 1000;

/**
 * The Directory's registry records, cached in this isolate so that a call on a known group or
 * project skips the Directory. Safe only because a record never changes once written: Knock has
 * no route that renames, moves or deletes a group or project, or changes its visibility or
 * `request_access_enabled`. Any route that ever does must drop the record here, and, since other
 * isolates keep their own copies, first give the cache a way to learn of it (say, a registry
 * version checked per call) or stop using it. Only records that exist are cached: a miss always
 * asks the Directory, so a namespace created a moment ago is found.
 */
const records = new Map<string, RegistryRecord>();

/** Full paths are unique case-insensitively as SQLite's NOCASE compares: ASCII letters only. */
const pathKey = (fullPath: string) => `path:${fullPath.replace(/[A-Z]/g, (ch) => ch.toLowerCase())}`;
const keyOf = (ref: number | string) => (typeof ref === 'number' ? `id:${ref}` : pathKey(ref));

export const cachedRecord = (ref: number | string): RegistryRecord | null => {
  const key = keyOf(ref);
  const record = records.get(key);
  if (!record) return null;
  // Least recently used goes first: a hit moves to the back.
  records.delete(key);
  records.set(key, record);
  return record;
};

export const rememberRecord = (record: RegistryRecord): void => {
  for (const key of [keyOf(record.namespace.id), pathKey(record.namespace.full_path)]) {
    records.delete(key);
    records.set(key, record);
  }
  while (records.size > 2 * CAPACITY) records.delete(records.keys().next().value!);
};
