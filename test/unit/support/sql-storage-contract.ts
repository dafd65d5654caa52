import { expect } from 'vitest';
import type { TestStorage } from './sql-storage';

/**
 * What the Worker's SQL code relies on from a Durable Object's storage, as checks run against
 * workerd's own storage (test/worker/sql-storage.test.ts) and against the Node adapter
 * (test/unit/sql-storage.test.ts): if the adapter drifts from workerd, the unit test of a pure SQL
 * module could pass where the Worker fails. Each check makes its own tables (`contract_*`).
 * Cloudflare's documentation: https://developers.cloudflare.com/durable-objects/api/sql-storage/
 */
export const SQL_STORAGE_CONTRACT: Record<string, (storage: TestStorage) => void> = {
  'runs every statement of a query, binds the last one and answers with its rows': ({ sql }) => {
    sql.exec('CREATE TABLE contract_a (x INTEGER); INSERT INTO contract_a VALUES (1); INSERT INTO contract_a VALUES (2);');
    const rows = sql.exec<{ x: number }>('INSERT INTO contract_a VALUES (3); SELECT x FROM contract_a WHERE x >= ? ORDER BY x', 2).toArray();
    expect(rows).toEqual([{ x: 2 }, { x: 3 }]);
  },

  'keeps a trigger whose body holds semicolons whole, and semicolons in strings and comments': ({ sql }) => {
    sql.exec(`CREATE TABLE contract_t (x TEXT);
      CREATE TABLE contract_log (x TEXT);
      CREATE TRIGGER contract_logged AFTER INSERT ON contract_t BEGIN
        INSERT INTO contract_log VALUES (NEW.x);
        INSERT INTO contract_log VALUES (NEW.x || ';');
      END;
      -- a comment; with a semicolon
      INSERT INTO contract_t VALUES ('a;b') /* another; */;`);
    expect(sql.exec('SELECT x FROM contract_log ORDER BY rowid').toArray()).toEqual([{ x: 'a;b' }, { x: 'a;b;' }]);
  },

  'binds every number as a real (a column of INTEGER affinity stores a whole one as an integer), strings, nulls and blobs as they are': ({ sql }) => {
    const typed = (value: unknown) => sql.exec<{ t: string; s: string | null }>('SELECT typeof(?) AS t, ? || \'\' AS s', value, value).one();
    expect(typed(3)).toEqual({ t: 'real', s: '3.0' });
    expect(typed(1.5)).toEqual({ t: 'real', s: '1.5' });
    sql.exec('CREATE TABLE contract_n (i INTEGER, r REAL, x)');
    sql.exec('INSERT INTO contract_n VALUES (?, ?, ?)', 3, 3, 3);
    expect(sql.exec('SELECT typeof(i) AS ti, typeof(r) AS tr, typeof(x) AS tx, i, r, x FROM contract_n').one()).toEqual({ ti: 'integer', tr: 'real', tx: 'real', i: 3, r: 3, x: 3 });
    expect(typed('x')).toEqual({ t: 'text', s: 'x' });
    expect(typed(null)).toEqual({ t: 'null', s: null });
    const blob = sql.exec<{ b: ArrayBuffer }>('SELECT ? AS b', new Uint8Array([1, 2, 255]).buffer).one().b;
    expect(blob).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(blob)]).toEqual([1, 2, 255]);
  },

  'gives each row once, as objects or as arrays, with the column names': ({ sql }) => {
    const query = 'SELECT 1 AS a, \'x\' AS b UNION ALL SELECT 2, \'y\' UNION ALL SELECT 3, \'z\'';
    const cursor = sql.exec<{ a: number; b: string }>(query);
    expect(cursor.columnNames).toEqual(['a', 'b']);
    expect(cursor.next()).toEqual({ done: false, value: { a: 1, b: 'x' } });
    expect([...cursor.raw()]).toEqual([
      [2, 'y'],
      [3, 'z'],
    ]);
    expect(cursor.toArray()).toEqual([]);
    expect(cursor.next().done).toBe(true);
    expect([...sql.exec<{ a: number; b: string }>(query)].map((r) => r.a)).toEqual([1, 2, 3]);
    expect(sql.exec('CREATE TABLE contract_empty (x)').toArray()).toEqual([]);
  },

  'one() is the only row, and throws when there is none or more': ({ sql }) => {
    expect(sql.exec('SELECT 7 AS n').one()).toEqual({ n: 7 });
    expect(() => sql.exec('SELECT 1 WHERE 0').one()).toThrow(/exactly one/);
    expect(() => sql.exec('SELECT 1 UNION ALL SELECT 2').one()).toThrow(/exactly one/);
  },

  'transactionSync commits what returns, undoes what throws, and nests': (storage) => {
    const { sql } = storage;
    const transactionSync = <T>(closure: () => T): T => storage.transactionSync(closure);
    sql.exec('CREATE TABLE contract_tx (x INTEGER)');
    expect(transactionSync(() => sql.exec('INSERT INTO contract_tx VALUES (1) RETURNING x').one().x)).toBe(1);
    expect(() =>
      transactionSync(() => {
        sql.exec('INSERT INTO contract_tx VALUES (2)');
        throw new Error('undo');
      }),
    ).toThrow('undo');
    transactionSync(() => {
      sql.exec('INSERT INTO contract_tx VALUES (3)');
      try {
        transactionSync(() => {
          sql.exec('INSERT INTO contract_tx VALUES (4)');
          throw new Error('undo the inner one');
        });
      } catch {
        // the outer transaction goes on
      }
    });
    expect(sql.exec('SELECT x FROM contract_tx ORDER BY x').toArray()).toEqual([{ x: 1 }, { x: 3 }]);
  },

  "lets AUTOINCREMENT's sqlite_sequence be read: the highest id ever used, after an explicit id and a delete": ({ sql }) => {
    sql.exec('CREATE TABLE contract_seq (id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT)');
    const last = () => sql.exec<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'contract_seq'").toArray()[0]?.seq ?? 0;
    expect(last()).toBe(0);
    sql.exec("INSERT INTO contract_seq (x) VALUES ('a')");
    sql.exec("INSERT INTO contract_seq (id, x) VALUES (9, 'b')");
    sql.exec('DELETE FROM contract_seq WHERE id = 9');
    expect(last()).toBe(9);
    expect(sql.exec<{ id: number }>("INSERT INTO contract_seq (x) VALUES ('c') RETURNING id").one().id).toBe(10);
  },

  'refuses transaction statements in SQL, and a failed statement changes nothing': ({ sql }) => {
    sql.exec('CREATE TABLE contract_u (x INTEGER UNIQUE)');
    expect(() => sql.exec('BEGIN TRANSACTION')).toThrow();
    expect(() => sql.exec('SAVEPOINT s')).toThrow();
    sql.exec('INSERT INTO contract_u VALUES (1)');
    expect(() => sql.exec('INSERT INTO contract_u VALUES (2), (1)')).toThrow(/UNIQUE constraint failed/);
    expect(sql.exec('SELECT x FROM contract_u').toArray()).toEqual([{ x: 1 }]);
  },
};
