import { sqliteTables } from './sqlite-tables.js';

/**
 * keygate's SQLite tables as Drizzle `sqlite-core` tables, to export from your own Drizzle schema
 * file so that drizzle-kit creates and migrates them with your tables. They describe what
 * `SqliteKeyStore.migrate()`, `SqliteRateLimiter.migrate()` and `SqliteCreditLedger.migrate()`
 * create (columns, types, defaults, checks, indexes): keys, usage, last use, the change table, the
 * dashboard's used tokens, the audit log, the outbox and webhooks, rate limits, credits, and
 * `keygate_migrations`. Two details differ, neither read by keygate: `keygate_usage` keeps a rowid
 * (drizzle-kit cannot write `WITHOUT ROWID`), and text primary keys are declared `NOT NULL`. What
 * Drizzle cannot describe (the triggers keeping a revoked key final and the audit log append-only,
 * and the version recorded in `keygate_migrations`) comes in a custom migration: see
 * `keygateSqliteMigrationSql`. drizzle-kit reads only top-level exports, so export each table by name
 * (leave out the ones of features you do not use). Instants shown to users are ISO 8601 text,
 * instants keygate compares (`windowEnd`, a hold's `expiresAt`, a change's `at`) are epoch
 * milliseconds; JSON columns read as parsed values. Read and join them with Drizzle freely; write
 * keygate's rows through keygate.
 *
 * @example
 * // db/schema.ts, the file drizzle.config.ts names as `schema`
 * import { keygateSqliteTables } from 'keygate/drizzle';
 * export const users = sqliteTable('users', { id: text('id').primaryKey() });
 * export const {
 *   keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateChanges, keygateUsedTokens,
 *   keygateAudit, keygateAuditRetention, keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries,
 *   keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
 * } = keygateSqliteTables();
 */
export function keygateSqliteTables() {
  return sqliteTables();
}

/**
 * The tables {@link keygateSqliteTables} returns: one property per table.
 *
 * @example
 * const tables: KeygateSqliteTables = keygateSqliteTables();
 * const rows = db.select().from(tables.keygateKeys).where(eq(tables.keygateKeys.accountId, 'acct_1')).all();
 */
export type KeygateSqliteTables = ReturnType<typeof keygateSqliteTables>;
