import type { SqliteDriver } from './driver.js';
import { KEY_STORE_MIGRATIONS } from './migrations.js';

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
 * nothing is left to do: one read. Puts the file in WAL mode first.
 *
 * @example
 * migrateKeyStore(driver, 5_000); // { applied: [1] }, then { applied: [] }
 */
export function migrateKeyStore(driver: SqliteDriver, busyTimeoutMs: number): { applied: number[] } {
  enableWal(driver);
  if (currentVersion(driver) >= KEY_STORE_MIGRATIONS.length) return { applied: [] };
  return driver.transaction(() => {
    driver.exec(
      'CREATE TABLE IF NOT EXISTS keygate_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)',
    );
    const current = currentVersion(driver);
    const applied: number[] = [];
    for (let v = current + 1; v <= KEY_STORE_MIGRATIONS.length; v++) {
      for (const statement of KEY_STORE_MIGRATIONS[v - 1] ?? []) driver.exec(statement);
      driver.run('INSERT INTO keygate_migrations (version, applied_at) VALUES (?, ?)', [v, new Date().toISOString()]);
      applied.push(v);
    }
    return { applied };
  }, busyTimeoutMs);
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

function currentVersion(driver: SqliteDriver): number {
  const present = driver.get(
    `SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'keygate_migrations'`,
  );
  if (!present) return 0;
  return Number(driver.get<{ v: number | null }>('SELECT max(version) AS v FROM keygate_migrations')?.v ?? 0);
}
