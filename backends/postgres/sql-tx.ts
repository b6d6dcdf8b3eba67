import type { SqlEngine } from '../sql/engine.js';
import { ISO_TIME } from '../sql/key-record.js';
import { numbered } from '../sql/placeholders.js';
import { runAsync, type SqlRunner, type SqlTx } from '../sql/step.js';
import type { Query, SqlClient } from './sql-client.js';

/**
 * A connection of the SQL core over a `Query`: the core's `?` statements numbered for PostgreSQL.
 * The query stays reachable for the parts that speak to it directly (the outbox).
 *
 * @example
 * await sql.transaction((q) => runAsync(body(pgTx(q))));
 */
export interface PgTx extends SqlTx {
  readonly q: Query;
}

/**
 * Wraps `q` as a {@link PgTx}.
 *
 * @example
 * const rows = await pgTx(sql.query).all('SELECT 1 AS one WHERE ? = ?', [1, 1]);
 */
export function pgTx(q: Query): PgTx {
  return {
    q,
    all: async <R>(sql: string, params?: readonly unknown[]) => (await q<R>(numbered(sql), params)).rows,
    run: async (sql, params) => {
      // pg reports `rowCount`, PGlite `affectedRows`.
      const result = (await q(numbered(sql), params)) as { rowCount?: number | null; affectedRows?: number };
      return { changes: Number(result.rowCount ?? result.affectedRows ?? 0) };
    },
  };
}

/**
 * How the SQL core runs on `sql`: reads on the pool, writes in one transaction.
 *
 * @example
 * const created = await pgRunner(sql).transaction(function* (tx) { ... });
 */
export function pgRunner(sql: SqlClient): SqlRunner<PgTx> {
  return {
    read: (body) => runAsync(body(pgTx(sql.query))),
    transaction: (body) => sql.transaction((q) => runAsync(body(pgTx(q)))),
  };
}

/**
 * The SQL core's engine on `sql`, over the tables of `schema` (validated by the caller; quoted here).
 *
 * @example
 * const audit = new SqlAuditLog(pgEngine(sqlClient(pool), 'public'));
 */
export function pgEngine(sql: SqlClient, schema: string): SqlEngine<PgTx> {
  return { runner: pgRunner(sql), time: ISO_TIME, table: (name) => `"${schema}".keygate_${name}` };
}
