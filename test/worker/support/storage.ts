import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { clock } from '../../../worker/clock';

// Loosely typed: the Durable Objects' RPC types are too deep for a generic helper.
type Stub = DurableObjectStub;

export const directoryStub = (): Stub => env.DIRECTORY.getByName('directory') as unknown as Stub;
export const grantsStub = (userId: number): Stub => env.USERS.getByName(String(userId)) as unknown as Stub;
export const namespaceStub = (namespaceId: number): Stub => env.NAMESPACES.getByName(String(namespaceId)) as unknown as Stub;

/** Every row of every table of a Durable Object's SQLite database (or of the tables named), by table name. */
export const dumpTables = (stub: Stub, only?: string[]): Promise<Record<string, Record<string, unknown>[]>> =>
  runInDurableObject<DurableObject, Record<string, Record<string, unknown>[]>>(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .toArray()
      .map((r) => r.name)
      .filter((t) => !only || only.includes(t));
    return Object.fromEntries(tables.map((t) => [t, sql.exec(`SELECT * FROM "${t}"`).toArray() as Record<string, unknown>[]]));
  });

/** A deterministic text of some tables, to tell whether anything in them changed. */
export const digestTables = async (stub: Stub, tables: string[]): Promise<string> => {
  const dump = await dumpTables(stub, tables);
  return JSON.stringify(tables.map((t) => [t, dump[t] ?? null]));
};

/** Every KV key and value of the token store. */
export const dumpKv = async (): Promise<{ key: string; value: string | null }[]> => {
  const out: { key: string; value: string | null }[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await env.TOKENS.list({ cursor });
    const names = page.keys.map((k) => k.name);
    // A bulk get reads up to 100 keys in one call, instead of a call per key.
    for (let i = 0; i < names.length; i += 100) {
      const values = await env.TOKENS.get(names.slice(i, i + 100), 'text');
      out.push(...names.slice(i, i + 100).map((key) => ({ key, value: values.get(key) ?? null })));
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return out;
};

/**
 * Runs a Durable Object's alarm as long as it is due now, or within the second in which a group's
 * or project's object gathers its background work (events to copy up, webhook deliveries), so
 * what is left scheduled is later work, such as a retry or a membership expiry.
 */
export const runDueAlarms = async (stub: Stub): Promise<void> => {
  for (let i = 0; i < 20; i++) {
    const at = await runInDurableObject<DurableObject, number | null>(stub, (_instance, state) => state.storage.getAlarm());
    if (at === null || at > clock.now() + 1000) return;
    await runDurableObjectAlarm(stub);
  }
  throw new Error('the alarm keeps being due');
};
