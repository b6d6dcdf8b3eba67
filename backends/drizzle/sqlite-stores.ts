import { capabilityOf, InvalidInputError, type KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import {
  type BetterSqlite3Like,
  SqliteCreditLedger,
  SqliteDashboardStore,
  SqliteKeyStore,
  SqliteRateLimiter,
} from 'keygate/sqlite';
import type { AuditLog, Outbox } from 'keygate/store-kit';

/**
 * Options of {@link drizzleSqliteStores}.
 *
 * @example
 * const options: DrizzleSqliteStoresOptions = { pollIntervalMs: 100, rateLimiterTimeoutMs: 100 };
 */
export interface DrizzleSqliteStoresOptions {
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
  /** The key store's `onError`: told when a poll of the change table fails. Default: ignore. */
  onError?: (err: KeyStoreUnavailableError) => void;
  /** The key store's `telemetry`, for a store used without a `CachedKeyStore`. @default undefined (none) */
  telemetry?: TelemetryOptions;
  /** Milliseconds a rate-limit `consume` waits for the write lock before it rejects. @default 250 */
  rateLimiterTimeoutMs?: number;
  /** Milliseconds a credit-ledger call waits for the write lock before it rejects. @default 1000 */
  creditLedgerTimeoutMs?: number;
}

/**
 * keygate's stores over one Drizzle SQLite database: the `keygate/sqlite` classes, on the
 * better-sqlite3 connection under it.
 *
 * @example
 * const { keys, rateLimiter, credits, dashboard, audit, outbox } = drizzleSqliteStores(db);
 */
export interface DrizzleSqliteStores {
  /** The key store (with usage, the change feed, the audit log and the outbox); give it to a `KeyManager`. */
  keys: SqliteKeyStore;
  /** A rate limiter in `keygate_rate_limits`. */
  rateLimiter: SqliteRateLimiter;
  /** A credit ledger in `keygate_credit_*`. */
  credits: SqliteCreditLedger;
  /** The dashboard's store, over the same tables as `keys`. */
  dashboard: SqliteDashboardStore;
  /** The audit log of `keys` (its `audit` capability), for reading entries without a `KeyManager`. */
  audit: AuditLog;
  /** The outbox of `keys` (its `outbox` capability), for a webhook dispatcher. */
  outbox: Outbox;
}

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
  const database = clientOf(db);
  const busyTimeoutMs = options.busyTimeoutMs;
  const keys = new SqliteKeyStore({
    database,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
    ...(options.changeRetentionMs !== undefined ? { changeRetentionMs: options.changeRetentionMs } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  const stores: DrizzleSqliteStores = {
    keys,
    rateLimiter: new SqliteRateLimiter({ database, timeoutMs: options.rateLimiterTimeoutMs }),
    credits: new SqliteCreditLedger({ database, timeoutMs: options.creditLedgerTimeoutMs }),
    dashboard: new SqliteDashboardStore({ database, ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}) }),
    audit: capabilityOf(keys, 'audit') as AuditLog,
    outbox: capabilityOf(keys, 'outbox') as Outbox,
  };
  enableWal(database);
  return stores;
}

/** The better-sqlite3 Database under a Drizzle db, or an `InvalidInputError` saying what is not supported. */
function clientOf(db: { $client: unknown }): BetterSqlite3Like {
  const client = db?.$client as Record<string, unknown> | undefined;
  const has = (name: string) => typeof client?.[name] === 'function';
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
