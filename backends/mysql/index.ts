export { MysqlCreditLedger, type MysqlCreditLedgerOptions } from './credit-ledger.js';
export { MysqlDashboardStore, type MysqlDashboardStoreOptions } from './dashboard-store.js';
export { MysqlRateLimiter, type MysqlRateLimiterOptions } from './rate-limiter.js';
export { MysqlKeyStore, type MysqlKeyStoreOptions } from './store.js';
