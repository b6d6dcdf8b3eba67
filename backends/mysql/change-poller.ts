import type { ChangeFeed } from '../sql/change-poller.js';
import type { Query, SqlClient } from './sql-client.js';

/**
 * The change table of a `MysqlKeyStore` as the SQL core's poller reads it. Numbers come from a
 * counter whose row lock is held to COMMIT, so none commits behind one already read; rows older than
 * `retainMs` are deleted when the poller prunes.
 *
 * @example
 * const stop = pollChanges(mysqlChangeFeed(sql, 'keygate_', 600_000), pace, handlers);
 */
export function mysqlChangeFeed(sql: SqlClient, prefix: string, retainMs: number): ChangeFeed {
  return {
    latest: async () => {
      const { rows } = await sql.query<{ seq: string | number }>(
        `SELECT seq FROM ${prefix}change_counter WHERE id = 1`,
      );
      return Number(rows[0]?.seq ?? 0);
    },
    after: async (cursor, limit) => {
      const { rows } = await sql.query<{ seq: string | number; change: string }>(
        `SELECT seq, payload AS \`change\` FROM ${prefix}changes WHERE seq > ? ORDER BY seq LIMIT ${Number(limit)}`,
        [cursor],
      );
      return rows;
    },
    prune: () => pruneChanges(sql.query, prefix, retainMs),
  };
}

/**
 * Deletes change rows older than `retainMs` (at most 10,000 per call, oldest first). Returns how many went.
 *
 * @example
 * await pruneChanges(sql.query, 'keygate_', 600_000); // 0 when pollers keep up
 */
export async function pruneChanges(q: Query, prefix: string, retainMs: number): Promise<number> {
  const { affectedRows } = await q(
    `DELETE FROM ${prefix}changes WHERE at < UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND ORDER BY seq LIMIT 10000`,
    [Math.round(retainMs * 1000)],
  );
  return affectedRows;
}
