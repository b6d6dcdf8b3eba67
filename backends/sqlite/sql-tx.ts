import { runSync, type SqlRunner, type SqlTx } from '../sql/step.js';
import type { SqliteDriver, SqlValue } from './driver.js';
import { guarded } from './errors.js';

/**
 * How the SQL core runs on a SQLite connection: the driver answers at once, so a transaction is one
 * synchronous `BEGIN IMMEDIATE` ... `COMMIT` call that nothing else on the connection can interleave
 * with; the write lock is waited for at most `busyTimeoutMs` milliseconds.
 *
 * @example
 * const created = await sqliteRunner(driver, 2_000).transaction(function* (tx) { ... });
 */
export function sqliteRunner(driver: SqliteDriver, busyTimeoutMs: number): SqlRunner {
  const tx: SqlTx = {
    all: <R>(sql: string, params?: readonly unknown[]) => driver.all<R>(sql, params as SqlValue[]),
    run: (sql, params) => {
      const { changes, lastInsertRowid } = driver.run(sql, params as SqlValue[]);
      return { changes, insertId: Number(lastInsertRowid) };
    },
  };
  return {
    read: (body) => guarded(() => runSync(body(tx))),
    transaction: (body) => guarded(() => driver.transaction(() => runSync(body(tx)), busyTimeoutMs)),
  };
}
