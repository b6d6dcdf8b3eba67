import { type ApiKeyRecord, generateKey, KeyManager, MemoryKeyStore } from 'keygate';

const DAY = 86_400_000;

/** The keys every adapter is tested with, one per row of the check-order table. */
export type SecretName =
  | 'allowListed'
  | 'open'
  | 'readOnly'
  | 'revoked'
  | 'expired'
  | 'suspended'
  | 'unknown'
  | 'limited'
  | 'severalLimits';

/** The `limited` key's own rate limit: 10 units per 30 s. */
export const LIMITED = { limit: 10, windowMs: 30_000 } as const;

/** The `severalLimits` key's named limits: 5 units a second and 100 a day. */
export const SEVERAL_LIMITS = [
  { name: 'burst', limit: 5, windowMs: 1_000 },
  { name: 'daily', limit: 100, windowMs: 86_400_000 },
] as const;

/** A seeded store, the raw keys, and the records (so a worker can rebuild the same store). */
export interface CaseFixture {
  store: MemoryKeyStore;
  secrets: Readonly<Record<SecretName, string>>;
  ids: Readonly<Record<SecretName, string>>;
  records: ApiKeyRecord[];
}

/** Seeds a `MemoryKeyStore` through `KeyManager`, as a host would. */
export async function seedCaseStore(): Promise<CaseFixture> {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  // A manager whose clock is two days behind creates a key that expired yesterday.
  const past = new KeyManager({ store, clock: () => Date.now() - 2 * DAY });
  const created = {
    allowListed: await keys.create({
      accountId: 'acct_1',
      name: 'allow-listed',
      mode: 'live',
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
    }),
    open: await keys.create({ accountId: 'acct_1', name: 'open', mode: 'test', permissions: ['email:verify'] }),
    limited: await keys.create({
      accountId: 'acct_1',
      name: 'limited',
      mode: 'live',
      permissions: ['email:verify'],
      rateLimit: LIMITED,
    }),
    severalLimits: await keys.create({
      accountId: 'acct_1',
      name: 'several limits',
      mode: 'live',
      permissions: ['email:verify'],
      rateLimit: SEVERAL_LIMITS,
    }),
    readOnly: await keys.create({ accountId: 'acct_1', name: 'read-only', mode: 'live', permissions: ['email:read'] }),
    revoked: await keys.create({ accountId: 'acct_1', name: 'revoked', mode: 'live', permissions: ['email:verify'] }),
    suspended: await keys.create({
      accountId: 'acct_1',
      name: 'suspended',
      mode: 'live',
      permissions: ['email:verify'],
    }),
    expired: await past.create({
      accountId: 'acct_1',
      name: 'expired',
      mode: 'live',
      permissions: ['email:verify'],
      expiresAt: new Date(Date.now() - DAY),
    }),
  };
  await keys.revoke(created.revoked.key.id);
  await keys.suspend(created.suspended.key.id, { reason: 'unpaid invoice' });
  const names = Object.keys(created) as Array<keyof typeof created>;
  const secrets = { unknown: generateKey({ mode: 'live' }) } as Record<SecretName, string>;
  const ids = { unknown: 'none' } as Record<SecretName, string>;
  const records: ApiKeyRecord[] = [];
  for (const name of names) {
    secrets[name] = created[name].secret;
    ids[name] = created[name].key.id;
    records.push((await store.findById(ids[name])) as ApiKeyRecord);
  }
  return { store, secrets, ids, records };
}

/** Rebuilds a fixture's store from its records (inside a worker, say). */
export async function storeFromRecords(records: readonly ApiKeyRecord[]): Promise<MemoryKeyStore> {
  const store = new MemoryKeyStore();
  for (const record of records) await store.insert(record);
  return store;
}
