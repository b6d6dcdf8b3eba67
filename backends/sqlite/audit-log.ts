import { SqlAuditLog } from '../sql/audit-log.js';
import type { SqliteDatabase, SqliteDriver } from './driver.js';
import { migrateKeyStore } from './migrate.js';
import { sqliteConnection } from './options.js';

/**
 * Options of {@link SqliteAuditLog}.
 *
 * @example
 * const options: SqliteAuditLogOptions = { database: new Database('keygate.db') };
 */
export interface SqliteAuditLogOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /** How long an append waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

// Every member of {@link SqliteAuditLogOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ database: true, busyTimeoutMs: true } satisfies Record<
  keyof SqliteAuditLogOptions,
  true
>);

/**
 * The audit log in a SQLite file (`keygate_audit`), the `audit` capability of a `SqliteKeyStore`
 * over the same database, so a `KeyManager` writes to it with no extra option. Append-only in the
 * file itself: triggers refuse every UPDATE and DELETE of the table, whoever sends it. Listings page
 * on the indexes `(account_id, id)` and `(key_id, id)`; every process on the file reads the same entries.
 *
 * @example
 * const log = new SqliteAuditLog({ database });
 * await log.migrate(); // the key store's tables (one migration history)
 * await log.list({ accountId: 'acct_1', limit: 20 });
 */
export class SqliteAuditLog extends SqlAuditLog {
  /** Milliseconds an append waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteAuditLogOptions) {
    const { driver, busyTimeoutMs, engine } = sqliteConnection(options);
    super(engine, { where: 'SqliteAuditLog', options, names: OPTION_NAMES });
    this.driver = driver;
    this.busyTimeoutMs = busyTimeoutMs;
  }

  /**
   * Creates or upgrades the tables: the key store's migrations (the audit table is one of them), so
   * calling this and `SqliteKeyStore.migrate`, in any order, is safe. Idempotent.
   *
   * @example
   * await log.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.driver, this.busyTimeoutMs);
  }
}
