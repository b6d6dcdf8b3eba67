export { PostgresCreditLedger, type PostgresCreditLedgerOptions } from './credit-ledger.js';
export { PostgresDashboardStore, type PostgresDashboardStoreOptions } from './dashboard-store.js';
export type { PGliteFolder } from './pglite-folder.js';
export { openPGliteFolder } from './pglite-folder.js';
export { PostgresRateLimiter, type PostgresRateLimiterOptions } from './rate-limiter.js';
export type { PGliteLike } from './sql-client.js';
export type { PostgresKeyStoreOptions } from './store.js';
export { PostgresKeyStore } from './store.js';
