import type { WritableKeyStore } from 'keygate';
import type { DashboardStore, UsageStore } from 'keygate/store-kit';

/** What the suite asserts with; vitest's and jest's `expect` fit. */
export interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeInstanceOf(expected: unknown): void;
  toHaveLength(length: number): void;
  toBeGreaterThan(expected: number): void;
  toBeLessThanOrEqual(expected: number): void;
  readonly not: ContractAssertion;
}

/** The test functions of the host's runner (vitest, jest, ...), so that keygate depends on none. */
export interface ContractTestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeout?: number): void;
  expect(actual: unknown): ContractAssertion;
  beforeEach(fn: () => Promise<void> | void): void;
  afterEach(fn: () => Promise<void> | void): void;
}

/** A fresh, empty store for one test, and what the suite may do with it. */
export interface StoreFixture {
  store: WritableKeyStore;
  /**
   * A second store over the same data, as another process would hold it. When given, the suite
   * checks that changes written through it reach a `CachedKeyStore` over `store` (its change channel).
   */
  peer?: WritableKeyStore;
  /** Makes the backing service unreachable (connections cut, new ones refused) until `restoreStore`. */
  breakStore?(): Promise<void>;
  restoreStore?(): Promise<void>;
  /** Releases what the fixture opened. */
  close?(): Promise<void>;
  /**
   * `count` stores over one fresh database nobody has migrated, as that many processes would open it;
   * `drop` removes it. Used when the options' `hooks` name `unmigrated`.
   */
  unmigrated?(count: number): Promise<{ stores: MigratableKeyStore[]; drop?(): Promise<void> }>;
}

/**
 * A key store that creates its own tables: `migrate()` applies the migrations it has not applied yet
 * and answers their versions, in order (`[]` when there were none).
 *
 * @example
 * const store: MigratableKeyStore = new SqliteKeyStore({ database });
 */
export type MigratableKeyStore = WritableKeyStore & { migrate(): Promise<{ readonly applied: readonly number[] }> };

/**
 * The name of an optional hook of {@link StoreFixture} that adds cases to the suite.
 *
 * @example
 * describeKeyStoreContract('MyStore', factory, t, { hooks: ['unmigrated'] });
 */
export type KeyStoreHook = 'unmigrated';

/** Options of {@link describeKeyStoreContract}. */
export interface ContractOptions {
  /** The store has a change channel between instances; every fixture then has a `peer`. Default `false`. */
  channel?: boolean;
  /** The fixture can take the service away; every fixture then has `breakStore` and `restoreStore`. Default `false`. */
  outage?: boolean;
  /** How long to wait for a change to arrive through the channel or for a restored store to answer, in milliseconds. Default `10_000`. */
  patienceMs?: number;
  /** The store keeps usage statistics. Default: whether it declares the `usage` capability. */
  usage?: boolean;
  /** The store holds an outbox its writes record events in. Default: whether it declares the `outbox` capability. */
  outbox?: boolean;
  /**
   * The store writes the audit entries a write carries (`WriteOptions.audit`) in the write itself.
   * Default: whether it declares the `auditedWrites` capability.
   */
  auditedWrites?: boolean;
  /** The optional hooks every fixture has (`unmigrated`: concurrent migration); the suite adds their cases. Default `[]`. */
  hooks?: readonly KeyStoreHook[];
}

/**
 * A fresh, empty backend for one test of {@link describeDashboardStoreContract}.
 *
 * @example
 * const keys = new MemoryKeyStore();
 * const fixture: DashboardStoreFixture = { keys, store: new MemoryDashboardStore(keys) };
 */
export interface DashboardStoreFixture {
  /** The key store whose records and usage `store` reads. */
  keys: WritableKeyStore & UsageStore;
  /** The dashboard store under test. */
  store: DashboardStore;
  /** A second dashboard store over the same data, as another process would hold it. Default: `store`. */
  peer?: DashboardStore;
  /** Releases what the fixture opened. */
  close?(): Promise<void>;
}
