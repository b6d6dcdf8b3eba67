import type { AuthResult, CreatedKey, WritableKeyStore } from 'keygate';
import { authenticate, CachedKeyStore, capabilityOf, KeyManager } from 'keygate';
import type { KeyChange } from 'keygate/store-kit';
import type { ContractAssertion, StoreFixture } from './contract-types.js';

/** The account every contract case writes to. */
export const ACCOUNT = 'acct_contract';

/** What one contract case works with: a fresh fixture, a manager over its store, and helpers. */
export interface ContractContext {
  readonly fx: StoreFixture;
  readonly keys: KeyManager;
  readonly expect: (actual: unknown) => ContractAssertion;
  /** How long to wait for the channel or a restored store, in milliseconds. */
  readonly patienceMs: number;
  /** Authenticates `secret` against `store` (by default from 203.0.113.7, with a 2 s timeout). */
  auth(store: WritableKeyStore, secret: string, ip?: string, timeoutMs?: number): Promise<AuthResult>;
  /** A `CachedKeyStore` over `store` (TTL 60 s), closed after the case. */
  cache(store: WritableKeyStore): CachedKeyStore;
  /** A key of `ACCOUNT` with the permission `email:verify`. */
  create(extra?: { allowedIps?: string[]; accountId?: string }): Promise<CreatedKey>;
}

/** One case of the contract: its title and what it does. */
export type ContractCase = readonly [title: string, run: (c: ContractContext) => Promise<void>];

/**
 * The context of one case over a fresh fixture; the caches it opens are pushed onto `caches` so that
 * the suite closes them afterwards.
 */
export function contractContext(
  fx: StoreFixture,
  expect: (actual: unknown) => ContractAssertion,
  patienceMs: number,
  caches: CachedKeyStore[],
): ContractContext {
  const keys = new KeyManager({ store: fx.store });
  return {
    fx,
    keys,
    expect,
    patienceMs,
    auth: (store, secret, ip = '203.0.113.7', timeoutMs = 2000) =>
      authenticate({ headers: { 'x-api-key': secret }, ip }, store, { timeoutMs }),
    cache(store) {
      const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
      caches.push(cached);
      return cached;
    },
    create: (extra = {}) =>
      keys.create({ accountId: ACCOUNT, name: 'contract', mode: 'test', permissions: ['email:verify'], ...extra }),
  };
}

/** Resolves with the first change of `id` at `version` or later that `store` announces; rejects after `patienceMs`. */
export function nextChange(
  store: WritableKeyStore,
  id: string,
  version: number,
  patienceMs: number,
): Promise<KeyChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no change of ${id} v${version} arrived within ${patienceMs} ms`));
    }, patienceMs);
    const off =
      capabilityOf(store, 'changes')?.subscribe((change) => {
        if (change.type === 'resync' || change.id !== id || change.version < version) return;
        clearTimeout(timer);
        off();
        resolve(change);
      }) ?? (() => {});
  });
}
