import type { SqlEngine } from '../sql/engine.js';
import type { TimeCodec } from '../sql/key-record.js';
import { runAsync, type SqlRunner, type SqlTx } from '../sql/step.js';
import { isoTime, type Query, type SqlClient, sqlTime } from './sql-client.js';

/**
 * A connection of the SQL core over a `Query` (mysql2 takes `?` as it is). The query stays reachable
 * for the parts that speak to it directly (the outbox).
 *
 * @example
 * await sql.transaction((q) => runAsync(body(mysqlTx(q))));
 */
export interface MysqlTx extends SqlTx {
  readonly q: Query;
}

/**
 * Wraps `q` as a {@link MysqlTx}.
 *
 * @example
 * const rows = await mysqlTx(sql.query).all('SELECT 1 AS one');
 */
export function mysqlTx(q: Query): MysqlTx {
  return {
    q,
    all: async <R>(sql: string, params?: readonly unknown[]) => (await q<R>(sql, params)).rows,
    run: async (sql, params) => {
      const { affectedRows, insertId } = await q(sql, params);
      return { changes: affectedRows, insertId };
    },
  };
}

/**
 * Instants in `DATETIME(3)` columns: written as UTC text, read back from text (or a Date, where a
 * pool casts types its own way).
 *
 * @example
 * MYSQL_TIME.write('2026-11-22T12:00:00.000Z') // '2026-11-22 12:00:00.000'
 */
export const MYSQL_TIME: TimeCodec = { write: (iso) => sqlTime(iso) as string, read: isoTime };

/**
 * How the SQL core runs on `sql`: reads on the pool, writes in one transaction (run again when the
 * server chose it as a deadlock victim).
 *
 * @example
 * const created = await mysqlRunner(sql).transaction(function* (tx) { ... });
 */
export function mysqlRunner(sql: SqlClient): SqlRunner<MysqlTx> {
  return {
    read: (body) => runAsync(body(mysqlTx(sql.query))),
    transaction: (body) => sql.transaction((q) => runAsync(body(mysqlTx(q)))),
  };
}

/**
 * The SQL core's engine on `sql`, over the tables named `<prefix><name>` (the prefix validated by the caller).
 *
 * @example
 * const audit = new SqlAuditLog(mysqlEngine(sqlClient(pool), 'keygate_'));
 */
export function mysqlEngine(sql: SqlClient, prefix: string): SqlEngine<MysqlTx> {
  // A LIMIT in an `IN` subquery is refused: a batch of a DELETE is `ORDER BY ... LIMIT` on the DELETE.
  return { runner: mysqlRunner(sql), time: MYSQL_TIME, table: (name) => `${prefix}${name}`, deleteLimit: true };
}
