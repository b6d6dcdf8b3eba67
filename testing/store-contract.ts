import type { CachedKeyStore } from 'keygate';
import { auditedWriteCases } from './contract-audited-writes.js';
import { changeCases } from './contract-changes.js';
import { type ContractCase, type ContractContext, contractContext } from './contract-context.js';
import { EXPIRY_CASES } from './contract-expiry.js';
import { FULL_RECORD_CASES } from './contract-full-record.js';
import { lifecycleCases } from './contract-lifecycle.js';
import { migrateCases } from './contract-migrate.js';
import { PINNED_CASES } from './contract-pinned.js';
import { RACE_CASES } from './contract-races.js';
import { RECORD_CASES } from './contract-records.js';
import { RETENTION_CASES } from './contract-retention.js';
import type { ContractOptions, ContractTestApi, StoreFixture } from './contract-types.js';

export type {
  ContractAssertion,
  ContractOptions,
  ContractTestApi,
  KeyStoreHook,
  MigratableKeyStore,
  StoreFixture,
} from './contract-types.js';

/**
 * The behaviour every writable key store must have, as a test suite a host runs against its own
 * store: create, lookups, every field of a record read back as written, expiry (set, changed,
 * cleared, and reached after a rotation's grace, as another instance reads it), update, conditional
 * writes (`ifVersion`), rotation (one successor under concurrency), suspension and resumption,
 * permanent revocation (also of a suspended key), listing, concurrent writers, change notifications
 * reaching a `CachedKeyStore`, audit entries written with their key write (a store that declares
 * `auditedWrites`: both kept, or neither), and, as `options` declares, changes through a second
 * instance (the channel) and 503 while the store is away (fail closed); for a store that keeps usage,
 * `prune` deleting the counts of the days that ended before its cutoff.
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeKeyStoreContract } from 'keygate/testing';
 * describeKeyStoreContract('MyStore', async () => ({ store: new MyStore(await freshDb()) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeKeyStoreContract(
  name: string,
  factory: () => Promise<StoreFixture>,
  t: ContractTestApi,
  options: ContractOptions = {},
): void {
  const { describe, it, expect, beforeEach, afterEach } = t;
  const cases: ContractCase[] = [
    ...RECORD_CASES,
    ...FULL_RECORD_CASES,
    ...EXPIRY_CASES,
    ...lifecycleCases(options),
    ...RACE_CASES,
    ...changeCases(options),
    ...auditedWriteCases(options.auditedWrites),
    ...migrateCases(options.hooks),
    ...PINNED_CASES,
    ...RETENTION_CASES,
  ];
  const caches: CachedKeyStore[] = [];
  let context: ContractContext;

  describe(`key store contract: ${name}`, () => {
    beforeEach(async () => {
      context = contractContext(await factory(), expect, options.patienceMs ?? 10_000, caches);
    });
    afterEach(async () => {
      for (const cached of caches.splice(0)) cached.close();
      await context.fx.restoreStore?.();
      await context.fx.close?.();
    });
    for (const [title, run] of cases) it(title, () => run(context));
  });
}
