export { PostgresRateLimiter, type PostgresRateLimiterOptions } from './rate-limiter.js';
export type { PGliteLike } from './sql-client.js';
export type { PostgresKeyStoreOptions } from './store.js';
export { PostgresKeyStore } from './store.js';
