import { pgSchema, pgTable } from 'drizzle-orm/pg-core';
import { checkOptionNames } from 'keygate/store-kit';
import { validSchema } from '../postgres/sql-client.js';
import { pgTablesWith } from './pg-tables.js';

/**
 * Options of {@link keygatePgTables}.
 *
 * @example
 * const options: KeygatePgTablesOptions = { schema: 'keygate' };
 */
export interface KeygatePgTablesOptions {
  /**
   * The PostgreSQL schema of the tables: the `schema` you give the stores (see `drizzlePgStores`).
   * Lower-case letters, digits and `_`, at most 40 characters. With `'public'` the tables are plain
   * `pgTable`s; with any other name they belong to a `pgSchema`, returned as `keygateSchema` so that
   * drizzle-kit creates the schema too.
   *
   * @default 'public'
   */
  schema?: string;
}

/**
 * keygate's PostgreSQL tables as Drizzle `pg-core` tables, to export from your own Drizzle schema
 * file so that drizzle-kit creates and migrates them with your tables. They describe exactly what
 * `PostgresKeyStore.migrate()`, `PostgresRateLimiter.migrate()` and `PostgresCreditLedger.migrate()`
 * create (columns, types, defaults, checks, indexes), keys, usage, last use, the dashboard's used
 * tokens, the audit log, the outbox and webhooks, rate limits, credits, and `keygate_migrations`.
 * What Drizzle cannot describe (the triggers keeping a revoked key final and the audit log
 * append-only, and the versions recorded in `keygate_migrations`) comes in a custom migration: see
 * `keygatePgMigrationSql`. drizzle-kit reads only top-level exports, so export each table by name (leave out
 * the ones of features you do not use, e.g. the credit tables). Read and join them with Drizzle freely; write keygate's rows
 * through keygate (its stores check and announce every change).
 *
 * @example
 * // db/schema.ts, the file drizzle.config.ts names as `schema`
 * import { keygatePgTables } from 'keygate/drizzle';
 * export const users = pgTable('users', { id: text('id').primaryKey() });
 * export const {
 *   keygateSchema, keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateUsedTokens,
 *   keygateAudit, keygateAuditRetention, keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries,
 *   keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
 * } = keygatePgTables({ schema: 'keygate' });
 */
export function keygatePgTables(options: KeygatePgTablesOptions = {}) {
  checkOptionNames(options, ['schema'], 'keygatePgTables');
  const schema = validSchema(options.schema ?? 'public');
  if (schema === 'public') return { keygateSchema: undefined, ...pgTablesWith(pgTable) };
  const keygateSchema = pgSchema(schema);
  return { keygateSchema, ...pgTablesWith(keygateSchema.table) };
}

/**
 * The tables {@link keygatePgTables} returns: one property per table, plus `keygateSchema` (the
 * `pgSchema`, or `undefined` for `public`).
 *
 * @example
 * const tables: KeygatePgTables = keygatePgTables();
 * const rows = await db.select().from(tables.keygateKeys).where(eq(tables.keygateKeys.accountId, 'acct_1'));
 */
export type KeygatePgTables = ReturnType<typeof keygatePgTables>;
