/**
 * Schema migrations in code for a SQLite-backed Durable Object. Each entry runs once, in order,
 * inside one transaction with the bookkeeping row, so a crash never leaves half a schema.
 */
export const migrate = (storage: Pick<DurableObjectStorage, 'sql' | 'transactionSync'>, migrations: readonly string[]): void => {
  storage.transactionSync(() => {
    const sql = storage.sql;
    sql.exec('CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    const done = sql.exec<{ v: number | null }>('SELECT MAX(version) AS v FROM _migrations').one().v ?? 0;
    migrations.forEach((ddl, index) => {
      const version = index + 1;
      if (version <= done) return;
      sql.exec(ddl);
      sql.exec('INSERT INTO _migrations (version, applied_at) VALUES (?, ?)', version, new Date().toISOString());
    });
  });
};
