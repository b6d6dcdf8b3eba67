// keygate/drizzle: keygate's tables as Drizzle schemas, per dialect, and keygate's stores over a
// Drizzle database. One file per dialect (pg.ts, pg-migration.ts, pg-stores.ts); each dialect's names
// carry it (`keygatePgTables`, `drizzlePgStores`).
export { type KeygatePgTables, type KeygatePgTablesOptions, keygatePgTables } from './pg.js';
export { type KeygatePgMigrationSqlOptions, keygatePgMigrationSql } from './pg-migration.js';
export { type DrizzlePgStores, type DrizzlePgStoresOptions, drizzlePgStores } from './pg-stores.js';
