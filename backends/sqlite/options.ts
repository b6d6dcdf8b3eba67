import type { SqlEngine } from '../sql/engine.js';
import { ISO_TIME } from '../sql/key-record.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { sqliteRunner } from './sql-tx.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * The connection every SQLite class is given: its driver, the write lock's wait (`busyTimeoutMs`,
 * default 2,000) and the SQL core's engine over both. Throws `InvalidInputError` for a bad option.
 *
 * @example
 * const { driver, busyTimeoutMs, engine } = sqliteConnection(options);
 */
export function sqliteConnection(options: { database: SqliteDatabase; busyTimeoutMs?: number } | undefined): {
  driver: SqliteDriver;
  busyTimeoutMs: number;
  engine: SqlEngine;
} {
  const driver = sqliteDriver(options?.database);
  const busyTimeoutMs = validBusyTimeoutMs(options?.busyTimeoutMs, 2_000);
  const engine: SqlEngine = {
    runner: sqliteRunner(driver, busyTimeoutMs),
    time: ISO_TIME,
    table: (name) => `keygate_${name}`,
  };
  return { driver, busyTimeoutMs, engine };
}
