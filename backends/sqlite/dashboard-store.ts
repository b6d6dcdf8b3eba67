import { SqlDashboardStore } from '../sql/dashboard-store.js';
import { SQLITE_DASHBOARD } from '../sql/sqlite/dashboard.js';
import type { SqliteDatabase } from './driver.js';
import { migrateKeyStore } from './migrate.js';
import { sqliteConnection } from './options.js';

/**
 * Options of {@link SqliteDashboardStore}.
 *
 * @example
 * const options: SqliteDashboardStoreOptions = { database: new Database('keygate.db') };
 */
export interface SqliteDashboardStoreOptions {
  /** The database of the `SqliteKeyStore` whose keys the dashboard shows. The caller owns it. */
  database: SqliteDatabase;
  /** How long a write (a used token) waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

// Every member of {@link SqliteDashboardStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ database: true, busyTimeoutMs: true } satisfies Record<
  keyof SqliteDashboardStoreOptions,
  true
>);

/**
 * The dashboard's store in a SQLite file, beside a `SqliteKeyStore`: it reads that store's tables
 * (keys, usage, last use) with one statement per call, on their indexes, and keeps the single-use
 * tokens in `keygate_used_tokens`, so a sign-in link works once across every process on the file.
 * A failure of SQLite throws `KeyStoreUnavailableError` with SQLite's error as `cause`.
 *
 * @example
 * const store = new SqliteDashboardStore({ database });
 * await store.migrate();
 * const ui = dashboard({ manager: new KeyManager({ store: new SqliteKeyStore({ database }) }), store, secret });
 */
export class SqliteDashboardStore extends SqlDashboardStore {
  /** Milliseconds a token's record waits for the write lock. */
  readonly busyTimeoutMs: number;

  constructor(options: SqliteDashboardStoreOptions) {
    const { driver, busyTimeoutMs, engine } = sqliteConnection(options);
    super(
      { ...engine, ...SQLITE_DASHBOARD, migrate: () => migrateKeyStore(driver, busyTimeoutMs) },
      { where: 'SqliteDashboardStore', options, names: OPTION_NAMES },
    );
    this.busyTimeoutMs = busyTimeoutMs;
  }
}
