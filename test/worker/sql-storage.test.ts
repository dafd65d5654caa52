import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, it } from 'vitest';
import { SQL_STORAGE_CONTRACT } from '../unit/support/sql-storage-contract';

// The Node adapter the unit project runs the pure SQL modules on (test/unit/support/sql-storage.ts)
// must behave as workerd's storage does: the same checks, here against a real Durable Object's.
describe("workerd's SQL storage, as the Node adapter stands in for it", () => {
  for (const [name, check] of Object.entries(SQL_STORAGE_CONTRACT)) {
    it(name, () => runInDurableObject(env.CLIENT_HOLDERS.getByName(`sql-contract:${crypto.randomUUID()}`), (_instance, state) => check(state.storage)));
  }
});
