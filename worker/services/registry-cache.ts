import type { NamespaceKind } from '../../shared/access-levels';
import type { NamespaceSnapshot } from '../durable/namespace-registry';

/**
 * What this isolate remembers of a group or project. Only facts that never change are trusted as
 * they are: the id, kind, creator, creation time and ancestors (Knock has no route that moves a
 * group or project). The mutable part, `snapshot` (settings and full path, with the registry
 * row's version), is only a hint: the namespace's own object keeps the newest copy it was shown
 * and judges by that, and refuses a full path whose version is older than its own.
 */
export interface RegistryRecord {
  id: number;
  kind: NamespaceKind;
  creatorId: number | null;
  createdAt: string;
  /** Ancestor ids, nearest first. */
  ancestorIds: number[];
  snapshot: NamespaceSnapshot;
}

/** Records kept per isolate; each is reachable by id and by full path. */
const CAPACITY = 1000;

/**
 * Registry records cached in this isolate, so that a call on a known group or project skips the
 * Directory. Invalidation (docs/architecture.md, "Caches"):
 * - by id: never needed for the immutable facts; the object's own settings win over the
 *   snapshot's whenever the object's version is newer;
 * - by full path: the object answers `Stale` when the path's version is older than its own
 *   (renamed, or an ancestor renamed) or it was deleted; the finder then forgets the record and
 *   asks the Directory, so an old path answers 404 and a new one is found at once;
 * - in the isolate that makes a change: the record is replaced (or forgotten) right away.
 * Only records that exist are cached: a miss asks the index partitions' copies of the registry
 * rows, then (when they do not know it) the Directory (see finder.ts).
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

/** Remembers a record, replacing an older one of the same id (and its old path). */
export const rememberRecord = (record: RegistryRecord): void => {
  const previous = records.get(keyOf(record.id));
  if (previous && previous.snapshot.version > record.snapshot.version) return;
  if (previous) forgetRecord(previous.id);
  for (const key of [keyOf(record.id), pathKey(record.snapshot.full_path)]) {
    records.delete(key);
    records.set(key, record);
  }
  while (records.size > 2 * CAPACITY) records.delete(records.keys().next().value!);
};

/** Forgets what this isolate knows of a group or project, by id and by its path. */
export const forgetRecord = (id: number): void => {
  const record = records.get(keyOf(id));
  records.delete(keyOf(id));
  if (record && records.get(pathKey(record.snapshot.full_path))?.id === id) records.delete(pathKey(record.snapshot.full_path));
};

/** Forgets a full path (a record found by it turned out stale). */
export const forgetPath = (fullPath: string): void => {
  records.delete(pathKey(fullPath));
};
