// Retention in the SQL core (docs/guide/retention.md): deletes in batches, each its own statement
// and transaction, so that pruning a big table never holds its locks (or SQLite's write lock) long.
import type { SqlEngine } from './engine.js';
import { type SqlRunner, wait } from './step.js';

/** The most rows one batch of a prune deletes. */
export const PRUNE_BATCH = 1_000;

/**
 * A DELETE of at most `?` rows of `table` that match `where`, oldest first by `orderBy` where the
 * engine orders a DELETE: `where`'s parameters, then the batch size. MySQL and MariaDB take `ORDER
 * BY ... LIMIT` on the DELETE; PostgreSQL, SQLite and D1 choose the rows by their `key` (one column,
 * or several in parentheses) in a subquery.
 *
 * @example
 * batchDelete(engine, 'keygate_usage', '(key_id, day, outcome)', 'day < ?', 'day')
 * // 'DELETE FROM keygate_usage WHERE (key_id, day, outcome) IN (SELECT key_id, day, outcome FROM keygate_usage WHERE day < ? LIMIT ?)'
 */
export function batchDelete(engine: SqlEngine, table: string, key: string, where: string, orderBy: string): string {
  if (engine.deleteLimit) return `DELETE FROM ${table} WHERE ${where} ORDER BY ${orderBy} LIMIT ?`;
  const columns = key.replace(/^\((.*)\)$/, '$1');
  return `DELETE FROM ${table} WHERE ${key} IN (SELECT ${columns} FROM ${table} WHERE ${where} LIMIT ?)`;
}

/**
 * Runs a {@link batchDelete} statement with `params` and the batch size, each run its own
 * transaction, until a run deletes fewer than a batch; answers how many rows it deleted in all.
 *
 * @example
 * const deleted = await deleteInBatches(engine.runner, sql, [cutoff]);
 */
export async function deleteInBatches(
  runner: SqlRunner,
  sql: string,
  params: readonly unknown[],
  batch = PRUNE_BATCH,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { changes } = await runner.transaction(function* (tx) {
      return yield* wait(tx.run(sql, [...params, batch]));
    });
    deleted += changes;
    if (changes < batch) return deleted;
  }
}
