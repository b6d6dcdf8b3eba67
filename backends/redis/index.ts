export {
  fromNodeRedisCluster,
  type NodeRedisClusterLike,
  type NodeRedisClusterSubscriberLike,
} from './cluster.js';
export { RedisCreditLedger, type RedisCreditLedgerOptions } from './credit-ledger.js';
export { RedisDashboardStore, type RedisDashboardStoreOptions } from './dashboard-store.js';
export { fromIoredis, type IoredisLike } from './ioredis.js';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './rate-limiter.js';
export type { RedisClientLike, RedisKeyStoreOptions, RedisSubscriberLike } from './store.js';
export { RedisKeyStore } from './store.js';
export { RedisAttemptCounter, type RedisAttemptCounterOptions, type RedisCommandClient } from './throttle.js';
