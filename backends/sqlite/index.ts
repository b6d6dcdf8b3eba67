export { SqliteAuditLog, type SqliteAuditLogOptions } from './audit-log.js';
export { SqliteCreditLedger, type SqliteCreditLedgerOptions } from './credit-ledger.js';
export { SqliteDashboardStore, type SqliteDashboardStoreOptions } from './dashboard-store.js';
export type {
  BetterSqlite3Like,
  NodeSqliteLike,
  RunResult,
  SqliteDatabase,
  SqliteDriver,
  SqlValue,
} from './driver.js';
export { sqliteDriver } from './driver.js';
export { CREDIT_TABLES, KEY_STORE_MIGRATIONS, RATE_LIMIT_TABLES } from './migrations.js';
export { SqliteOutbox, type SqliteOutboxOptions } from './outbox.js';
export { SqliteRateLimiter, type SqliteRateLimiterOptions } from './rate-limiter.js';
export { SqliteKeyStore, type SqliteKeyStoreOptions } from './store.js';
