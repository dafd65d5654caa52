import { describe, it } from 'vitest';
import { nodeSqlStorage } from './support/sql-storage';
import { SQL_STORAGE_CONTRACT } from './support/sql-storage-contract';

// The same checks run against workerd's storage in test/worker/sql-storage.test.ts.
describe('the Node adapter of a Durable Object\'s SQL storage', () => {
  for (const [name, check] of Object.entries(SQL_STORAGE_CONTRACT)) it(name, () => check(nodeSqlStorage()));
});
