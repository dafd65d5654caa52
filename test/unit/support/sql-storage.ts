import { constants, DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementSync } from 'node:sqlite';

/**
 * The part of a SQLite-backed Durable Object's storage that the Worker's pure SQL modules use
 * (`sql.exec` and `transactionSync`), over Node's `node:sqlite`, so those modules run as unit tests
 * in Node without workerd. It behaves as Cloudflare documents `SqlStorage`
 * (https://developers.cloudflare.com/durable-objects/api/sql-storage/), and
 * `sql-storage-contract.ts` checks it against workerd's own (test/worker/sql-storage.test.ts):
 *
 * - `exec(query, ...bindings)` runs every statement of `query` in order; the bindings apply to the
 *   last one, and the cursor is the last one's.
 * - Numbers are bound as REAL, as workerd binds them; a blob comes back as an ArrayBuffer.
 * - The cursor gives rows as objects (`toArray`, `next`, iteration) or arrays (`raw`), once; `one()`
 *   throws unless there is exactly one row. `rowsRead` and `rowsWritten` are not known here and throw.
 * - Transactions only through `transactionSync` (nested ones are savepoints); the SQL statements
 *   BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE are refused, as Cloudflare refuses them.
 */
export type TestStorage = Pick<DurableObjectStorage, 'sql' | 'transactionSync'>;

/**
 * The pieces of a SQL text, cut at each semicolon outside quotes, brackets and comments, empty
 * ones dropped. A piece is a statement, or part of a trigger whose body holds semicolons of its own.
 */
const pieces = (text: string): string[] => {
  const found: string[] = [];
  let start = 0;
  let substance = false;
  const cut = (end: number) => {
    if (substance) found.push(text.slice(start, end));
    start = end;
    substance = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const closer = c === "'" || c === '"' || c === '`' ? c : c === '[' ? ']' : null;
    if (closer) {
      const end = text.indexOf(closer, i + 1);
      i = end < 0 ? text.length : end;
      substance = true;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === ';') {
      cut(i + 1);
    } else if (!/\s/.test(c)) {
      substance = true;
    }
  }
  cut(text.length);
  return found;
};

/** A statement after which a prepared one's columns may differ. */
const SCHEMA_CHANGE = /^\s*(CREATE|ALTER|DROP)\b/i;

/** A JavaScript value as workerd binds it: numbers as REAL (as node:sqlite does), ArrayBuffers as blobs. */
const bindable = (value: unknown): SQLInputValue => (value instanceof ArrayBuffer ? new Uint8Array(value) : (value as SQLInputValue));

/** A column's value as workerd returns it: blobs as ArrayBuffers. */
const returned = (value: SQLOutputValue): SqlStorageValue => {
  if (value instanceof Uint8Array) return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
  return value as SqlStorageValue;
};

/** The result of the last statement, read eagerly: SQLite makes every change of a statement on its first step anyway. */
class Cursor<T extends Record<string, SqlStorageValue>> {
  private position = 0;

  constructor(
    readonly columnNames: string[],
    private readonly rows: SqlStorageValue[][],
  ) {}

  private object(row: SqlStorageValue[]): T {
    return Object.fromEntries(this.columnNames.map((name, i) => [name, row[i]])) as T;
  }

  next(): IteratorResult<T, undefined> {
    const row = this.rows[this.position];
    if (!row) return { done: true, value: undefined };
    this.position++;
    return { done: false, value: this.object(row) };
  }

  toArray(): T[] {
    const rest = this.rows.slice(this.position).map((row) => this.object(row));
    this.position = this.rows.length;
    return rest;
  }

  one(): T {
    const rest = this.toArray();
    if (rest.length === 0) throw new Error('Expected exactly one result from SQL query, but got no results.');
    if (rest.length > 1) throw new Error('Expected exactly one result from SQL query, but got multiple results.');
    return rest[0];
  }

  *raw<U extends SqlStorageValue[]>(): IterableIterator<U> {
    while (this.position < this.rows.length) yield this.rows[this.position++] as U;
  }

  get rowsRead(): number {
    throw new Error('rowsRead is counted by workerd only: measure it in the worker project');
  }

  get rowsWritten(): number {
    throw new Error('rowsWritten is counted by workerd only: measure it in the worker project');
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this as unknown as IterableIterator<T>;
  }
}

/** A fresh in-memory database with the storage API the pure SQL modules are written against. */
export const nodeSqlStorage = (): TestStorage => {
  const db = new DatabaseSync(':memory:');
  // Cloudflare refuses transaction statements in SQL; only transactionSync's own savepoints pass.
  let inTransactionSync = false;
  db.setAuthorizer((action) =>
    !inTransactionSync && (action === constants.SQLITE_TRANSACTION || action === constants.SQLITE_SAVEPOINT) ? constants.SQLITE_DENY : constants.SQLITE_OK,
  );
  /** False for a trigger cut inside its body; any other error is the statement's own, raised when it runs. */
  const complete = (statement: string): boolean => {
    try {
      db.prepare(statement);
      return true;
    } catch (e) {
      return !(e instanceof Error && /incomplete input/.test(e.message));
    }
  };

  /** Prepared statements by text: the same few queries run over and over, as in workerd, which caches them too. */
  const prepared = new Map<string, { statement: StatementSync; columns: string[] }>();
  const prepare = (text: string) => {
    let found = prepared.get(text);
    if (!found) {
      const statement = db.prepare(text);
      statement.setReturnArrays(true);
      found = { statement, columns: statement.columns().map((c) => c.name) };
      prepared.set(text, found);
    }
    return found;
  };

  /** Runs every statement but the last as it comes (a later one may name a table an earlier one made), then the last with the bindings. */
  const exec = <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): SqlStorageCursor<T> => {
    let last = query;
    if (query.includes(';')) {
      const all = pieces(query);
      last = '';
      all.forEach((piece, i) => {
        last += piece;
        if (i < all.length - 1 && complete(last)) {
          db.exec(last);
          if (SCHEMA_CHANGE.test(last)) prepared.clear();
          last = '';
        }
      });
      if (last === '') return new Cursor<T>([], []) as unknown as SqlStorageCursor<T>;
    }
    const { statement, columns } = prepare(last);
    const rows = (statement.all(...bindings.map(bindable)) as unknown as SQLOutputValue[][]).map((row) => row.map(returned));
    if (SCHEMA_CHANGE.test(last)) prepared.clear();
    return new Cursor<T>(columns, rows) as unknown as SqlStorageCursor<T>;
  };

  const sql = {
    exec,
    get databaseSize(): number {
      const pages = db.prepare('PRAGMA page_count').get() as { page_count: number };
      const size = db.prepare('PRAGMA page_size').get() as { page_size: number };
      return pages.page_count * size.page_size;
    },
    Cursor: Cursor as unknown as typeof SqlStorageCursor,
    Statement: class {} as unknown as typeof SqlStorageStatement,
  } satisfies SqlStorage;

  let depth = 0;
  const savepoint = (statement: string) => {
    inTransactionSync = true;
    try {
      db.exec(statement);
    } finally {
      inTransactionSync = false;
    }
  };
  /** All or nothing: a savepoint, released when the closure returns, rolled back when it throws. */
  const transactionSync = <T>(closure: () => T): T => {
    const name = `knock_test_${depth++}`;
    savepoint(`SAVEPOINT ${name}`);
    try {
      const result = closure();
      savepoint(`RELEASE ${name}`);
      return result;
    } catch (e) {
      savepoint(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw e;
    } finally {
      depth--;
    }
  };

  return { sql, transactionSync };
};
