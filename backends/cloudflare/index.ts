// keygate/cloudflare: keygate on Cloudflare Workers. Runs on workerd: no `node:` import anywhere below.

export { KEY_STORE_MIGRATIONS } from '../sql/sqlite/migrations.js';
export { D1AuditLog, type D1AuditLogOptions } from './d1/audit-log.js';
export type { D1Like, D1ResultLike, D1StatementLike, KVLike } from './d1/bindings.js';
export { D1DashboardStore, type D1DashboardStoreOptions } from './d1/dashboard-store.js';
export { D1KeyStore, type D1KeyStoreOptions } from './d1/key-store.js';
export { KV_PREFIX } from './d1/kv-cache.js';
export { migrationSql } from './d1/migration-sql.js';
// Rate limits and credits kept by Durable Objects (one object per key, one per account).
export {
  DurableObjectCreditLedger,
  type DurableObjectCreditLedgerOptions,
  type DurableObjectIdLike,
  type DurableObjectNamespaceLike,
  DurableObjectRateLimiter,
  type DurableObjectRateLimiterOptions,
  type DurableObjectStateLike,
  type DurableObjectStubLike,
  durableObjectSqlDriver,
  KeygateCreditObject,
  type KeygateCreditObjectOptions,
  KeygateRateLimitObject,
  type ResponseLike,
  type SqlCursorLike,
  type SqlStorageLike,
} from './durable-objects/index.js';
