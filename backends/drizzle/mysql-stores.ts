import { InvalidInputError } from 'keygate';
import { MysqlCreditLedger, MysqlDashboardStore, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import { checkOptionNames } from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
import {
  clientUnder,
  keyStoreHooks,
  STORES_OPTION_NAMES,
  type StoresOf,
  type StoresOptions,
  storesOf,
} from './stores.js';

/**
 * Options of {@link drizzleMysqlStores}.
 *
 * @example
 * const options: DrizzleMysqlStoresOptions = { tablePrefix: 'keygate_', rateLimiterTimeoutMs: 100 };
 */
export interface DrizzleMysqlStoresOptions extends StoresOptions {
  /** The `tablePrefix` given to `keygateMysqlTables`. @default 'keygate_' */
  tablePrefix?: string;
  /**
   * How often the key store reads the change table once a `CachedKeyStore` subscribed, in
   * milliseconds: a change made in another process reaches this one's caches within about this long.
   *
   * @default 500
   */
  pollIntervalMs?: number;
  /** Milliseconds rows of the change table are kept. @default 600000 (10 minutes) */
  changeRetentionMs?: number;
}

/**
 * keygate's stores over one Drizzle MySQL/MariaDB database: the `keygate/mysql` classes, on the
 * mysql2 pool under it. They share its connections and its database.
 *
 * @example
 * const { keys, rateLimiter, credits, dashboard, audit, outbox } = drizzleMysqlStores(db);
 */
export interface DrizzleMysqlStores
  extends StoresOf<MysqlKeyStore, MysqlRateLimiter, MysqlCreditLedger, MysqlDashboardStore> {}

/**
 * Builds keygate's stores over your Drizzle MySQL/MariaDB database, on the mysql2 pool under it
 * (`db.$client`, from `drizzle-orm/mysql2` given a Pool, a connection URL or pool settings). The tables
 * must exist already, made by drizzle-kit from `keygateMysqlTables` and the custom migration of
 * `keygateMysqlMigrationSql`: nothing here calls `migrate()` (and a later `migrate()` of these stores
 * changes nothing). Throws `InvalidInputError` naming `db` for a db over a single mysql2 Connection
 * (concurrent keygate transactions would share it: give drizzle a Pool) or another driver
 * (PlanetScale, TiDB serverless: keygate needs mysql2), and naming `tablePrefix` for a bad prefix.
 *
 * @example
 * import { drizzle } from 'drizzle-orm/mysql2';
 * import mysql from 'mysql2/promise';
 * const db = drizzle(mysql.createPool({ uri: process.env.DATABASE_URL }), { schema, mode: 'default' });
 * const { keys, rateLimiter } = drizzleMysqlStores(db);
 * const manager = new KeyManager({ store: keys });
 * app.use('/v1', apiKeyAuth({ store: new CachedKeyStore(keys), rateLimiter }));
 */
export function drizzleMysqlStores(
  db: { $client: unknown },
  options: DrizzleMysqlStoresOptions = {},
): DrizzleMysqlStores {
  checkOptionNames(
    options,
    [...STORES_OPTION_NAMES, ...['tablePrefix', 'pollIntervalMs', 'changeRetentionMs']],
    'drizzleMysqlStores',
  );
  const client = clientOf(db);
  const tablePrefix = options.tablePrefix ?? 'keygate_';
  const keys = new MysqlKeyStore({
    client,
    tablePrefix,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.changeRetentionMs !== undefined ? { changeRetentionMs: options.changeRetentionMs } : {}),
    ...keyStoreHooks(options),
  });
  return storesOf({
    keys,
    rateLimiter: new MysqlRateLimiter({ client, tablePrefix, timeoutMs: options.rateLimiterTimeoutMs }),
    credits: new MysqlCreditLedger({ client, tablePrefix, timeoutMs: options.creditLedgerTimeoutMs }),
    dashboard: new MysqlDashboardStore({ client, tablePrefix }),
  });
}

/** The mysql2 pool under a Drizzle db, or an `InvalidInputError` saying what is not supported. */
function clientOf(db: { $client: unknown }): Pool {
  const { client, has } = clientUnder(db);
  if (has('getConnection') && has('query')) return client as unknown as Pool;
  if (has('query') && has('beginTransaction')) {
    throw new InvalidInputError(
      'db',
      'a Drizzle db over a single mysql2 Connection is not supported: give drizzle-orm/mysql2 a Pool (mysql.createPool)',
    );
  }
  throw new InvalidInputError('db', 'db must be a Drizzle database from drizzle-orm/mysql2 over a mysql2 Pool');
}
