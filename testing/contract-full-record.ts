import { type ApiKeyRecord, hashKey, type WritableKeyStore } from 'keygate';
import type { KeyPatch } from 'keygate/store-kit';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';

/** Every field of a key set, none at its default: a store that drops or mangles one fails the read-back. */
export function fullRecord(id: string, hash: string, accountId = ACCOUNT): ApiKeyRecord {
  return {
    id,
    hash,
    accountId,
    name: 'every field — ünïcode',
    mode: 'live',
    status: 'suspended',
    permissions: ['email:verify', 'email:send', 'billing:*'],
    allowedIps: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
    hint: 'mk_live_…Zz9Q',
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-03T04:05:06.789Z',
    expiresAt: '2027-02-03T04:05:06.007Z',
    revokedAt: null,
    suspendedAt: '2026-01-03T04:05:06.789Z',
    suspendedReason: 'unpaid invoice #42',
    rotatedFrom: 'key_contract_predecessor',
    rotatedTo: 'key_contract_successor',
    metadata: { owner: 'team-a', ticket: 42, ratio: 1.5, nested: { on: true, tags: ['x', 'y'] }, none: null },
    rateLimit: [
      { name: 'burst', limit: 10, windowMs: 1_000 },
      { name: 'monthly', limit: 1_000_000, windowMs: 2_592_000_000 },
    ],
    version: 1,
  };
}

/** A key with every optional field empty or null. */
export function bareRecord(id: string, hash: string, accountId = ACCOUNT): ApiKeyRecord {
  return {
    id,
    hash,
    accountId,
    name: 'bare',
    mode: 'test',
    status: 'active',
    permissions: [],
    allowedIps: [],
    hint: 'mk_test_…Aa0b',
    createdAt: '2026-01-02T03:04:05.000Z',
    updatedAt: '2026-01-02T03:04:05.000Z',
    expiresAt: null,
    revokedAt: null,
    suspendedAt: null,
    suspendedReason: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    rateLimit: null,
    version: 1,
  };
}

/** A patch that sets every field {@link bareRecord} leaves empty (and suspends the key). */
export const FILL: KeyPatch = {
  name: 'filled',
  permissions: ['a:b'],
  allowedIps: ['192.0.2.1'],
  metadata: { added: ['later'] },
  rateLimit: { limit: 5, windowMs: 1_500 },
  expiresAt: '2028-03-04T05:06:07.089Z',
  rotatedTo: 'key_contract_next',
  status: 'suspended',
  suspendedAt: '2026-02-01T00:00:00.002Z',
  suspendedReason: 'review',
  updatedAt: '2026-02-01T00:00:00.002Z',
};

/** The record as each read answers it, from the store and from its peer (another instance) when it has one. */
async function readsOf(c: ContractContext, record: ApiKeyRecord): Promise<unknown[]> {
  const stores: WritableKeyStore[] = c.fx.peer ? [c.fx.store, c.fx.peer] : [c.fx.store];
  const reads: unknown[] = [];
  for (const store of stores) {
    reads.push(await store.findById(record.id));
    reads.push(await store.findByHash(record.hash));
    reads.push((await store.listByAccount(record.accountId)).find((r) => r.id === record.id));
  }
  return reads;
}

async function expectEverywhere(c: ContractContext, record: ApiKeyRecord): Promise<void> {
  const reads = await readsOf(c, record);
  c.expect(reads).toEqual(reads.map(() => record));
}

async function keepsEveryField(c: ContractContext): Promise<void> {
  const { fx, expect } = c;
  const full = fullRecord('key_contract_full', await hashKey('mk_live_contract_full_record_secret_000'));
  const bare = bareRecord('key_contract_bare', await hashKey('mk_test_contract_bare_record_secret_000'));
  expect(await fx.store.insert(full)).toEqual(full);
  expect(await fx.store.insert(bare)).toEqual(bare);
  await expectEverywhere(c, full);
  await expectEverywhere(c, bare);

  // Every field the full record had set is cleared, and every field the bare one lacked is set.
  const clear: KeyPatch = {
    name: 'cleared',
    permissions: [],
    allowedIps: [],
    metadata: {},
    rateLimit: null,
    expiresAt: null,
    rotatedTo: null,
    status: 'active',
    suspendedAt: null,
    suspendedReason: null,
    updatedAt: '2026-02-01T00:00:00.001Z',
  };
  const cleared: ApiKeyRecord = { ...full, ...clear, version: 2 } as ApiKeyRecord;
  expect(await fx.store.update(full.id, clear)).toEqual(cleared);
  await expectEverywhere(c, cleared);
  const filled: ApiKeyRecord = { ...bare, ...FILL, version: 2 } as ApiKeyRecord;
  expect(await fx.store.update(bare.id, FILL)).toEqual(filled);
  await expectEverywhere(c, filled);

  // A revocation sets its time and keeps every other field as it was.
  const revoke: KeyPatch = {
    status: 'revoked',
    revokedAt: '2026-02-02T00:00:00.003Z',
    updatedAt: '2026-02-02T00:00:00.003Z',
  };
  const revoked: ApiKeyRecord = { ...filled, ...revoke, version: 3 } as ApiKeyRecord;
  expect(await fx.store.update(bare.id, revoke)).toEqual(revoked);
  await expectEverywhere(c, revoked);
  await expectEverywhere(c, cleared);
}

/** Every stored field of a key, set and empty, through insert, update and every read. */
export const FULL_RECORD_CASES: readonly ContractCase[] = [
  ['keeps every field of a key, set and empty, through insert, update, revocation and every read', keepsEveryField],
];
