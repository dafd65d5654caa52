import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { plainRows } from '../../worker/durable/plain-rows';
import { SQL_STORAGE_CONTRACT } from '../unit/support/sql-storage-contract';

const inObject = (check: (storage: DurableObjectStorage) => void) =>
  runInDurableObject(env.CLIENT_HOLDERS.getByName(`sql-contract:${crypto.randomUUID()}`), (_instance, state) => check(state.storage));

// The Node adapter the unit project runs the pure SQL modules on (test/unit/support/sql-storage.ts)
// must behave as workerd's storage does: the same checks, here against a real Durable Object's.
describe("workerd's SQL storage, as the Node adapter stands in for it", () => {
  for (const [name, check] of Object.entries(SQL_STORAGE_CONTRACT)) it(name, () => inObject(check));
});

// The object classes read through plainRows (worker/durable/plain-rows.ts): rows built in
// JavaScript must be what workerd's own cursor gives, so the same checks run through it.
describe("workerd's SQL storage with rows built in JavaScript (plainRows)", () => {
  for (const [name, check] of Object.entries(SQL_STORAGE_CONTRACT)) {
    it(name, () => inObject((storage) => check({ sql: plainRows(storage.sql), transactionSync: (closure) => storage.transactionSync(closure) })));
  }
});

describe('plainRows', () => {
  it('gives one wrapper per storage, so the helpers an object lends its storage to share the object’s', () =>
    inObject((storage) => {
      expect(plainRows(storage.sql)).toBe(plainRows(storage.sql));
    }));
});
