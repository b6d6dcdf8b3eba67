import { applyMigrations, type MigrationLedger } from '../sql/migrate.js';
import { SQLITE_LEDGER, SQLITE_RECORD, sqliteRecorded } from '../sql/sqlite/ledger.js';
import { KEY_STORE_MIGRATIONS } from '../sql/sqlite/migrations.js';
import { runSync, wait } from '../sql/step.js';
import type { SqliteDriver } from './driver.js';
import { guarded } from './errors.js';

/**
 * Puts the database file in WAL mode (readers never wait for the writer, and the writer never waits
 * for readers), unless it is already, or is in memory. The mode is a property of the file: it stays
 * for every connection and process that opens it later. Run outside any transaction.
 *
 * @example
 * enableWal(driver); // 'wal'
 */
export function enableWal(driver: SqliteDriver): string {
  const mode = driver.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode;
  if (mode === 'wal' || mode === 'memory') return mode;
  return driver.get<{ journal_mode: string }>('PRAGMA journal_mode = WAL')?.journal_mode ?? 'unknown';
}

/**
 * Creates or upgrades the key store's tables ({@link KEY_STORE_MIGRATIONS}): the versions not yet
 * recorded in `keygate_migrations` run in order, in one `BEGIN IMMEDIATE` transaction, which
 * serialises concurrent callers in any process (the second finds the versions recorded). Cheap when
 * nothing is left to do: one read. Puts the file in WAL mode first. Rejects with keygate errors only.
 *
 * @example
 * await migrateKeyStore(driver, 5_000); // { applied: [1] }, then { applied: [] }
 */
export function migrateKeyStore(driver: SqliteDriver, busyTimeoutMs: number): Promise<{ applied: number[] }> {
  const ledger: MigrationLedger = {
    prepare: () => driver.exec(SQLITE_LEDGER),
    recorded: () => sqliteRecorded((sql) => driver.get(sql)),
    apply: (statement) => driver.exec(statement),
    record: (v) => driver.run(SQLITE_RECORD, [v, new Date().toISOString()]),
  };
  return guarded(() => {
    enableWal(driver);
    if (runSync(wait(ledger.recorded())) >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
    return driver.transaction(() => runSync(applyMigrations(KEY_STORE_MIGRATIONS, ledger)), busyTimeoutMs);
  });
}

/**
 * Runs idempotent statements (`CREATE ... IF NOT EXISTS`) in one write transaction, after WAL mode.
 *
 * @example
 * migrateTables(driver, CREDIT_TABLES, 5_000);
 */
export function migrateTables(driver: SqliteDriver, statements: readonly string[], busyTimeoutMs: number): void {
  enableWal(driver);
  driver.transaction(() => {
    for (const statement of statements) driver.exec(statement);
  }, busyTimeoutMs);
}
