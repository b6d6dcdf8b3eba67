// keygate/drizzle: keygate's tables as Drizzle schemas, per dialect, and keygate's stores over a
// Drizzle database. One file per dialect (pg.ts, pg-migration.ts, pg-stores.ts; sqlite*, mysql*);
// each dialect's names carry it (`keygatePgTables`, `drizzleSqliteStores`).

export { type KeygateMysqlTables, type KeygateMysqlTablesOptions, keygateMysqlTables } from './mysql.js';
export { type KeygateMysqlMigrationSqlOptions, keygateMysqlMigrationSql } from './mysql-migration.js';
export { type DrizzleMysqlStores, type DrizzleMysqlStoresOptions, drizzleMysqlStores } from './mysql-stores.js';
export { type KeygatePgTables, type KeygatePgTablesOptions, keygatePgTables } from './pg.js';
export { type KeygatePgMigrationSqlOptions, keygatePgMigrationSql } from './pg-migration.js';
export { type DrizzlePgStores, type DrizzlePgStoresOptions, drizzlePgStores } from './pg-stores.js';
export { type KeygateSqliteTables, keygateSqliteTables } from './sqlite.js';
export { type KeygateSqliteMigrationSqlOptions, keygateSqliteMigrationSql } from './sqlite-migration.js';
export { type DrizzleSqliteStores, type DrizzleSqliteStoresOptions, drizzleSqliteStores } from './sqlite-stores.js';
