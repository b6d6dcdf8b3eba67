import { InvalidInputError } from 'keygate';
import {
  type BetterSqlite3Like,
  SqliteCreditLedger,
  SqliteDashboardStore,
  SqliteKeyStore,
  SqliteRateLimiter,
} from 'keygate/sqlite';
import { checkOptionNames } from 'keygate/store-kit';
import {
  clientUnder,
  keyStoreHooks,
  STORES_OPTION_NAMES,
  type StoresOf,
  type StoresOptions,
  storesOf,
} from './stores.js';

/**
 * Options of {@link drizzleSqliteStores}.
 *
 * @example
 * const options: DrizzleSqliteStoresOptions = { pollIntervalMs: 100, rateLimiterTimeoutMs: 100 };
 */
export interface DrizzleSqliteStoresOptions extends StoresOptions {
  /**
   * How often the key store reads the change table once a `CachedKeyStore` subscribed, in
   * milliseconds: a change written by another process reaches this one's caches within about this long.
   *
   * @default 250
   */
  pollIntervalMs?: number;
  /** Milliseconds a key, dashboard, audit or outbox write waits for the file's write lock. @default 2000 */
  busyTimeoutMs?: number;
  /** Milliseconds rows of the change table are kept. @default 600000 (10 minutes) */
  changeRetentionMs?: number;
}

/**
 * keygate's stores over one Drizzle SQLite database: the `keygate/sqlite` classes, on the
 * better-sqlite3 connection under it.
 *
 * @example
 * const { keys, rateLimiter, credits, dashboard, audit, outbox } = drizzleSqliteStores(db);
 */
export interface DrizzleSqliteStores
  extends StoresOf<SqliteKeyStore, SqliteRateLimiter, SqliteCreditLedger, SqliteDashboardStore> {}

/**
 * Builds keygate's stores over your Drizzle SQLite database, on the better-sqlite3 Database under
 * it (`db.$client`, from `drizzle-orm/better-sqlite3`). The tables must exist already, made by
 * drizzle-kit from `keygateSqliteTables` and the custom migration of `keygateSqliteMigrationSql`:
 * nothing here calls `migrate()` (and a later `migrate()` of these stores changes nothing). It does
 * put a file database in WAL mode, as `migrate()` would (readers never wait for the writer; the mode
 * stays with the file). Throws `InvalidInputError` naming `db` for another driver (libsql, D1, Bun,
 * sql.js, Expo): keygate's SQLite classes need a synchronous better-sqlite3 connection.
 *
 * @example
 * import Database from 'better-sqlite3';
 * import { drizzle } from 'drizzle-orm/better-sqlite3';
 * const db = drizzle(new Database('app.db'), { schema });
 * const { keys, rateLimiter } = drizzleSqliteStores(db);
 * const manager = new KeyManager({ store: keys });
 * app.use('/v1', apiKeyAuth({ store: new CachedKeyStore(keys), rateLimiter }));
 */
export function drizzleSqliteStores(
  db: { $client: unknown },
  options: DrizzleSqliteStoresOptions = {},
): DrizzleSqliteStores {
  checkOptionNames(
    options,
    [...STORES_OPTION_NAMES, ...['pollIntervalMs', 'busyTimeoutMs', 'changeRetentionMs']],
    'drizzleSqliteStores',
  );
  const database = clientOf(db);
  const busyTimeoutMs = options.busyTimeoutMs;
  const keys = new SqliteKeyStore({
    database,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
    ...(options.changeRetentionMs !== undefined ? { changeRetentionMs: options.changeRetentionMs } : {}),
    ...keyStoreHooks(options),
  });
  const stores = storesOf({
    keys,
    rateLimiter: new SqliteRateLimiter({ database, timeoutMs: options.rateLimiterTimeoutMs }),
    credits: new SqliteCreditLedger({ database, timeoutMs: options.creditLedgerTimeoutMs }),
    dashboard: new SqliteDashboardStore({ database, ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}) }),
  });
  enableWal(database);
  return stores;
}

/** The better-sqlite3 Database under a Drizzle db, or an `InvalidInputError` saying what is not supported. */
function clientOf(db: { $client: unknown }): BetterSqlite3Like {
  const { client, has } = clientUnder(db);
  if (has('prepare') && has('exec') && has('pragma')) return client as unknown as BetterSqlite3Like;
  throw new InvalidInputError(
    'db',
    'db must be a Drizzle database from drizzle-orm/better-sqlite3: keygate/sqlite needs a synchronous better-sqlite3 connection (libsql, D1, Bun, sql.js and Expo are not supported)',
  );
}

/** WAL mode for a file database (a no-op when it is already, or in memory), as `migrate()` sets it. */
function enableWal(database: BetterSqlite3Like): void {
  const mode = database.pragma('journal_mode', { simple: true });
  if (mode !== 'wal' && mode !== 'memory') database.pragma('journal_mode = WAL');
}
