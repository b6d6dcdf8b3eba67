import { checkOptionNames } from 'keygate/store-kit';
import { validTablePrefix } from '../mysql/sql-client.js';
import { mysqlTables } from './mysql-tables.js';

/**
 * Options of {@link keygateMysqlTables}.
 *
 * @example
 * const options: KeygateMysqlTablesOptions = { tablePrefix: 'keygate_' };
 */
export interface KeygateMysqlTablesOptions {
  /**
   * The prefix of every table name: the `tablePrefix` you give the stores (see `drizzleMysqlStores`).
   * A lower-case letter, then letters, digits and `_`, at most 40 characters.
   *
   * @default 'keygate_'
   */
  tablePrefix?: string;
}

/**
 * keygate's MySQL/MariaDB tables as Drizzle `mysql-core` tables, to export from your own Drizzle
 * schema file so that drizzle-kit creates and migrates them with your tables. They describe what
 * `MysqlKeyStore.migrate()`, `MysqlRateLimiter.migrate()` and `MysqlCreditLedger.migrate()` create
 * (columns with their `utf8mb4_bin` collation, defaults, checks, indexes): keys, usage, last use, the
 * change feed (`changes`, `change_counter`), the dashboard's used tokens, the audit log, the outbox and
 * webhooks, rate limits, credits, and `migrations`. What Drizzle cannot describe (the triggers keeping a
 * revoked key final and the audit log append-only, the change counter's row, and the version recorded
 * in `<prefix>migrations`) comes in a custom migration: see `keygateMysqlMigrationSql`. drizzle-kit reads
 * only top-level exports, so export each table by name. Times read as MySQL's text in UTC
 * (`2026-01-02 03:04:05.678`). Read and join them with Drizzle freely; write keygate's rows through keygate.
 * Throws `InvalidInputError` naming `tablePrefix` for a bad prefix.
 *
 * @example
 * // db/schema.ts, the file drizzle.config.ts names as `schema`
 * import { keygateMysqlTables } from 'keygate/drizzle';
 * export const users = mysqlTable('users', { id: varchar('id', { length: 64 }).primaryKey() });
 * export const {
 *   keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateUsedTokens, keygateAudit, keygateAuditRetention,
 *   keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries, keygateChangeCounter, keygateChanges,
 *   keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
 * } = keygateMysqlTables();
 */
export function keygateMysqlTables(options: KeygateMysqlTablesOptions = {}) {
  checkOptionNames(options, ['tablePrefix'], 'keygateMysqlTables');
  return mysqlTables(validTablePrefix(options.tablePrefix ?? 'keygate_'));
}

/**
 * The tables {@link keygateMysqlTables} returns: one property per table.
 *
 * @example
 * const tables: KeygateMysqlTables = keygateMysqlTables();
 * const rows = await db.select().from(tables.keygateKeys).where(eq(tables.keygateKeys.accountId, 'acct_1'));
 */
export type KeygateMysqlTables = ReturnType<typeof keygateMysqlTables>;
