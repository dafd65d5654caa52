/**
 * A Durable Object's SQL storage whose rows are built as plain objects in JavaScript, from the
 * arrays its cursor gives (`raw()`), rather than by workerd. workerd makes each row object of
 * `toArray()`, `one()` and iteration through its C++ API, one property at a time; built here, rows
 * of one query share one shape, and the object classes read rows on every call they answer (the
 * access-request list's page of 20 rows of 11 columns cost about a sixth of the list's CPU time
 * that way: docs/performance.md, "Rows built in JavaScript").
 *
 * Everything else is the storage's own: the query runs when `exec` is called, as before, and the
 * column names, `raw()` and the read and write counts are the cursor's. The checks of
 * test/unit/support/sql-storage-contract.ts run against it over workerd's storage
 * (test/worker/sql-storage.test.ts) as they do against the storage itself.
 */
class PlainRowCursor<T extends Record<string, SqlStorageValue>> {
  constructor(private readonly cursor: SqlStorageCursor<T>) {}

  get columnNames(): string[] {
    return this.cursor.columnNames;
  }

  get rowsRead(): number {
    return this.cursor.rowsRead;
  }

  get rowsWritten(): number {
    return this.cursor.rowsWritten;
  }

  raw<U extends SqlStorageValue[]>(): IterableIterator<U> {
    return this.cursor.raw<U>();
  }

  next(): IteratorResult<T, undefined> {
    const step = this.cursor.raw().next();
    return step.done ? { done: true, value: undefined } : { done: false, value: rowOf<T>(this.cursor.columnNames, step.value) };
  }

  toArray(): T[] {
    const names = this.cursor.columnNames;
    const rows: T[] = [];
    for (const values of this.cursor.raw()) rows.push(rowOf<T>(names, values));
    return rows;
  }

  /** The only row; throws when there is none or more, as workerd's cursor does. */
  one(): T {
    const rows = this.toArray();
    if (rows.length !== 1) throw new Error(`Expected exactly one result from SQL query, but got ${rows.length === 0 ? 'no results' : 'multiple results'}.`);
    return rows[0]!;
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this as unknown as IterableIterator<T>;
  }
}

const rowOf = <T>(names: string[], values: SqlStorageValue[]): T => {
  const row: Record<string, SqlStorageValue> = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i]!;
  return row as T;
};

const wrapped = new WeakMap<SqlStorage, SqlStorage>();

/**
 * `sql` with its rows built in JavaScript. One wrapper per storage: the helpers an object lends its
 * storage to (its second factor, its webhooks, its logouts) get the object's own.
 */
export const plainRows = (sql: SqlStorage): SqlStorage => {
  let plain = wrapped.get(sql);
  if (!plain) {
    plain = {
      exec: <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): SqlStorageCursor<T> =>
        new PlainRowCursor<T>(sql.exec<T>(query, ...bindings)) as unknown as SqlStorageCursor<T>,
      get databaseSize(): number {
        return sql.databaseSize;
      },
      Cursor: sql.Cursor,
      Statement: sql.Statement,
    };
    wrapped.set(sql, plain);
  }
  return plain;
};
