import { SqlOutbox } from '../sql/outbox.js';
import { OUTBOX_SQL } from '../sql/sqlite/outbox.js';
import type { RunInfo } from '../sql/step.js';
import type { SqliteDatabase, SqliteDriver } from './driver.js';
import { migrateKeyStore } from './migrate.js';
import { sqliteConnection } from './options.js';

/**
 * Options of {@link SqliteOutbox}.
 *
 * @example
 * const options: SqliteOutboxOptions = { database: new Database('keygate.db') };
 */
export interface SqliteOutboxOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /** How long a write waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

// Every member of {@link SqliteOutboxOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ database: true, busyTimeoutMs: true } satisfies Record<
  keyof SqliteOutboxOptions,
  true
>);

/**
 * The outbox in a SQLite file (`keygate_outbox`, `keygate_webhook_endpoints`,
 * `keygate_webhook_deliveries`), the `outbox` capability of a `SqliteKeyStore` over the same
 * database. An event a `KeyManager` hands with a key write is inserted in that write's transaction,
 * with one delivery row per matching enabled endpoint: a crash loses both or neither. A claim runs in
 * one `BEGIN IMMEDIATE` transaction (one writer at a time on the file), picks the due deliveries and
 * leases them, so dispatchers in any process never claim the same delivery while a lease holds; an
 * outcome is recorded only under the token of the lease that sent it.
 *
 * @example
 * const outbox = new SqliteOutbox({ database });
 * await outbox.migrate();
 * const { endpoint, secret } = await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://example.com/hooks' });
 */
export class SqliteOutbox extends SqlOutbox {
  /** Milliseconds a write waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteOutboxOptions) {
    const { driver, busyTimeoutMs, engine } = sqliteConnection(options);
    super(
      {
        ...engine,
        // A write transaction holds the file: no row lock to take, no locked row to skip.
        lockRow: '',
        lockDue: '',
        *insertEvent(tx, params) {
          return ((yield tx.run(OUTBOX_SQL.appendEvent, params)) as RunInfo).changes === 1;
        },
        fanOut: OUTBOX_SQL.fanOut,
        failOrphans: OUTBOX_SQL.failOrphans,
      },
      { where: 'SqliteOutbox', options, names: OPTION_NAMES },
    );
    this.driver = driver;
    this.busyTimeoutMs = busyTimeoutMs;
  }

  /**
   * Creates or upgrades the tables: the key store's migrations (the outbox's tables are among them).
   * Idempotent.
   *
   * @example
   * await outbox.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.driver, this.busyTimeoutMs);
  }
}
