import { capabilityOf, InvalidInputError, type KeyManager, MemoryKeyStore } from 'keygate';
import type { DashboardStore } from 'keygate/store-kit';
import { MemoryDashboardStore } from './memory-store.js';

const METHODS = ['listKeysPage', 'getDailyTotalsOfKeys', 'getActivityOfKeys', 'markTokenUsed', 'isTokenUsed'] as const;

// One default store per MemoryKeyStore: dashboards over the same keys share their used tokens, so a
// sign-in link redeemed on one is refused on the other.
const defaults = new WeakMap<MemoryKeyStore, MemoryDashboardStore>();

/** `store`, the store it wraps (a `CachedKeyStore` declares the `wrapper` capability), and so on down. */
function chainOf(store: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let part = store; part && !chain.includes(part); part = capabilityOf(part, 'wrapper')?.wrapped) chain.push(part);
  return chain;
}

function nameOf(value: unknown): string {
  return (value as { constructor?: { name?: string } } | null)?.constructor?.name || typeof value;
}

/**
 * The dashboard's store: `given` when there is one (it must have the five `DashboardStore` methods),
 * else a `MemoryDashboardStore` over the manager's store when that is a `MemoryKeyStore`, also under
 * wrappers. Any other key store needs the store of its own backend, so that a used sign-in link is
 * refused by every process: then this throws `InvalidInputError` naming `store` and the class to pass.
 *
 * @example
 * dashboardStoreOf(undefined, new KeyManager({ store: new MemoryKeyStore() })) // a MemoryDashboardStore
 * dashboardStoreOf(undefined, new KeyManager({ store: pgStore }))            // throws: pass a PostgresDashboardStore
 */
export function dashboardStoreOf(given: DashboardStore | undefined, manager: KeyManager): DashboardStore {
  if (given !== undefined) {
    const missing = METHODS.filter(
      (m) => typeof (given as unknown as Record<string, unknown> | null)?.[m] !== 'function',
    );
    if (missing.length > 0) {
      throw new InvalidInputError(
        'store',
        `store must be a DashboardStore (MemoryDashboardStore, PostgresDashboardStore, RedisDashboardStore); a ${nameOf(given)} has no ${missing.join(', ')}`,
      );
    }
    return given;
  }
  const chain = chainOf(manager.store);
  const memory = chain.find((part): part is MemoryKeyStore => part instanceof MemoryKeyStore);
  if (memory) {
    let store = defaults.get(memory);
    if (!store) {
      store = new MemoryDashboardStore(memory);
      defaults.set(memory, store);
    }
    return store;
  }
  throw new InvalidInputError('store', missingStoreMessage(nameOf(chain.at(-1))));
}

// What to pass instead, for the key store at the bottom of the wrappers.
function missingStoreMessage(keyStore: string): string {
  const pass =
    keyStore === 'PostgresKeyStore'
      ? "a PostgresDashboardStore from 'keygate/postgres' over the same client and schema"
      : keyStore === 'RedisKeyStore'
        ? "a RedisDashboardStore from 'keygate/redis' over the same client and prefix"
        : "the DashboardStore of your backend (MemoryDashboardStore from 'keygate/dashboard' over a MemoryKeyStore)";
  return `the dashboard needs a store of its own for a ${keyStore}: pass store, ${pass}`;
}
