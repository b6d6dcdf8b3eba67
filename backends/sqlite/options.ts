import type { SqlRunner } from '../sql/step.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { sqliteRunner } from './sql-tx.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * The connection every SQLite class is given: its driver, the write lock's wait (`busyTimeoutMs`,
 * default 2,000) and the SQL core's runner over both. Throws `InvalidInputError` for a bad option.
 *
 * @example
 * const { driver, busyTimeoutMs, runner } = sqliteConnection(options);
 */
export function sqliteConnection(options: { database: SqliteDatabase; busyTimeoutMs?: number } | undefined): {
  driver: SqliteDriver;
  busyTimeoutMs: number;
  runner: SqlRunner;
} {
  const driver = sqliteDriver(options?.database);
  const busyTimeoutMs = validBusyTimeoutMs(options?.busyTimeoutMs, 2_000);
  return { driver, busyTimeoutMs, runner: sqliteRunner(driver, busyTimeoutMs) };
}
