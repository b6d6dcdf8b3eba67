import type { ChangeFeed } from '../sql/change-poller.js';
import { CHANGE_SQL } from '../sql/sqlite/keys.js';
import type { SqliteDriver } from './driver.js';

/**
 * The change table of a SQLite file as the SQL core's poller reads it. SQLite has one writer at a time
 * and numbers rows inside the write transaction, so rows commit in sequence order; writers prune.
 *
 * @example
 * const stop = pollChanges(sqliteChangeFeed(driver), pace, handlers);
 */
export function sqliteChangeFeed(driver: SqliteDriver): ChangeFeed {
  return {
    latest: async () => Number(driver.get<{ seq: number }>(CHANGE_SQL.latest)?.seq ?? 0),
    after: async (cursor, limit) => driver.all<{ seq: number; change: string }>(CHANGE_SQL.after, [cursor, limit]),
  };
}
