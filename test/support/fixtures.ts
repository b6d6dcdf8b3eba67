import { type ApiKeyRecord, KeyManager, type KeyStore, MemoryKeyStore } from 'keygate';

/** A store with one key per interesting state, and their secrets. */
export async function seededStore(now = Date.now) {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store, clock: now });
  const valid = await keys.create({
    accountId: 'acct_1',
    name: 'valid',
    mode: 'live',
    permissions: ['email:verify', 'email:score'],
    allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
  });
  const open = await keys.create({ accountId: 'acct_1', name: 'open', mode: 'test', permissions: ['email:verify'] });
  const revoked = await keys.create({ accountId: 'acct_1', name: 'revoked', mode: 'live' });
  await keys.revoke(revoked.key.id);
  const expiring = await keys.create({
    accountId: 'acct_1',
    name: 'expiring',
    mode: 'live',
    expiresAt: new Date(now() + 60_000),
  });
  return { store, keys, valid, open, revoked, expiring };
}

/** A store that fails every lookup, the way a database that is down does. */
export const failingStore: KeyStore = {
  findByHash: async () => {
    throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  },
};

/** A store that never answers. */
export const hangingStore: KeyStore = { findByHash: () => new Promise<never>(() => {}) };

/** Wraps a store and counts its digest lookups; every other method passes through. */
export function countingStore<T extends KeyStore>(inner: T): T & { calls: number } {
  let calls = 0;
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'calls') return calls;
      if (prop === 'findByHash') {
        return (hash: string): Promise<ApiKeyRecord | null | undefined> => {
          calls++;
          return target.findByHash(hash);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as T & { calls: number };
}
