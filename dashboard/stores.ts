import { capabilityOf, type UsageStore } from 'keygate/store-kit';

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
 * The usage statistics `store` keeps: its `usage` capability (a `CachedKeyStore` forwards the one of
 * the store it wraps), else undefined.
 *
 * @example
 * usageStoreOf(new CachedKeyStore(new MemoryKeyStore())) // the MemoryKeyStore
 * usageStoreOf(new CachedKeyStore(storeWithoutUsage))    // undefined
 */
export function usageStoreOf(store: unknown): UsageStore | undefined {
  return capabilityOf(store, 'usage');
}
