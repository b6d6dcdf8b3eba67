import { isUsageStore, type UsageStore } from 'keygate/store-kit';

// How far a chain of wrapping stores is followed (a `CachedKeyStore` keeps the store it wraps as `store`).
const MAX_DEPTH = 4;

const inner = (store: unknown): unknown => (store as { store?: unknown } | null | undefined)?.store;

/**
 * The first of `store`, `store.store`, `store.store.store`, ... (a `CachedKeyStore` keeps the store it
 * wraps as `store`) for which `fits` holds, or undefined. Called once, when the dashboard is set up.
 *
 * @example
 * const ledger = findStore(manager.store, isUsedTokenStore); // the MemoryKeyStore under a CachedKeyStore
 */
export function findStore<T>(store: unknown, fits: (value: unknown) => value is T): T | undefined {
  for (let s = store, depth = 0; s && depth < MAX_DEPTH; depth++, s = inner(s)) {
    if (fits(s)) return s;
  }
  return undefined;
}

/**
 * `store` when it keeps usage statistics (`isUsageStore`), else undefined. A wrapper such as
 * `CachedKeyStore` has the usage methods but forwards them to the store it wraps, and fails when that
 * one keeps none: so every store down the chain must be a usage store too.
 *
 * @example
 * usageStoreOf(new CachedKeyStore(new MemoryKeyStore())) // the CachedKeyStore
 * usageStoreOf(new CachedKeyStore(storeWithoutUsage))    // undefined
 */
export function usageStoreOf(store: unknown): UsageStore | undefined {
  for (let s = store, depth = 0; s && depth < MAX_DEPTH; depth++, s = inner(s)) {
    if (!isUsageStore(s)) return undefined;
  }
  return isUsageStore(store) ? store : undefined;
}
