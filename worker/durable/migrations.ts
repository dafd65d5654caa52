/**
 * The schema of a SQLite-backed Durable Object, run on its first use. `migrations` is the class's
 * list in its schema module: its baseline first, then any step a later release appends (never an
 * edit of a step that shipped; docs/deploy.md, "Changing a schema"). Each step runs once, in order,
 * inside one transaction with its bookkeeping row, so a crash never leaves half a schema.
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
