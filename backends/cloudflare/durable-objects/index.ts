// The Durable Object half of keygate/cloudflare: rate limits and credits kept by Durable Objects.
export { DurableObjectCreditLedger, type DurableObjectCreditLedgerOptions } from './credit-ledger.js';
export { KeygateCreditObject, type KeygateCreditObjectOptions } from './credit-object.js';
export { KeygateRateLimitObject } from './rate-limit-object.js';
export { DurableObjectRateLimiter, type DurableObjectRateLimiterOptions } from './rate-limiter.js';
export { durableObjectSqlDriver } from './storage-driver.js';
export type {
  DurableObjectIdLike,
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  DurableObjectStubLike,
  ResponseLike,
  SqlCursorLike,
  SqlStorageLike,
} from './workers-types.js';
