import { type ApiKeyRecord, capabilityOf, hashKey } from 'keygate';
import type { KeyChange, KeyPatch } from 'keygate/store-kit';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';
import { poll, rejection, sleep } from './contract-kit.js';

// Key-store cases for decisions the other cases left open (found by mutating the memory and SQLite
// stores: each mutant these kill passed every other case): the id half of a duplicate insert, patch
// fields left undefined, the type of each announced change, and usage read by day range.

async function refusesSameIdOtherDigest({ fx, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const record = (await fx.store.findById(key.id)) as ApiKeyRecord;
  const otherDigest = await hashKey('mk_test_contract_same_id_other_digest_000');
  const conflict = { code: 'key_conflict' };
  expect(await rejection(fx.store.insert({ ...record, hash: otherDigest, name: 'dup' }))).toMatchObject(conflict);
  expect(await fx.store.findById(key.id)).toEqual(record);
  expect((await fx.store.findByHash(otherDigest)) ?? null).toBe(null);
}

async function keepsUndefinedPatchFields({ fx, expect, create }: ContractContext): Promise<void> {
  const { key } = await create();
  const before = (await fx.store.findById(key.id)) as ApiKeyRecord;
  // A patch built from optional inputs carries undefined for what was not given: those fields stay.
  const patch = { name: undefined, metadata: undefined, allowedIps: undefined, updatedAt: before.updatedAt };
  const after = await fx.store.update(key.id, patch as KeyPatch);
  expect(after).toEqual({ ...before, version: 2 });
  expect(await fx.store.findById(key.id)).toEqual({ ...before, version: 2 });
}

async function announcesEachWrite({ fx, keys, expect, create, patienceMs }: ContractContext): Promise<void> {
  const changes = capabilityOf(fx.store, 'changes');
  if (!changes) return;
  const seen: KeyChange[] = [];
  const off = changes.subscribe((change) => {
    if (change.type !== 'resync') seen.push(change);
  });
  try {
    await sleep(50); // lets a lazily opened channel finish subscribing
    const { key } = await create();
    const { hash } = (await fx.store.findById(key.id)) as ApiKeyRecord;
    await keys.update(key.id, { name: 'renamed' });
    await keys.revoke(key.id);
    // A channel may repeat a change: the first of each version is the one read.
    const first = (version: number) => seen.find((c) => c.id === key.id && c.version === version);
    await poll(async () => first(3), Boolean, Date.now() + patienceMs, 20);
    const expected = { id: key.id, hash, accountId: ACCOUNT };
    expect(first(1)).toEqual({ type: 'created', version: 1, ...expected });
    expect(first(2)).toEqual({ type: 'updated', version: 2, ...expected });
    expect(first(3)).toEqual({ type: 'revoked', version: 3, ...expected });
  } finally {
    off();
  }
}

async function readsUsageByDay({ fx, expect, create }: ContractContext): Promise<void> {
  const usage = capabilityOf(fx.store, 'usage');
  if (!usage) return;
  const { key } = await create();
  const count = (day: string, outcome: 'allowed' | 'rate_limited', n: number) => {
    return { keyId: key.id, accountId: ACCOUNT, day, outcome, count: n };
  };
  const counts = [count('2026-03-01', 'allowed', 2), count('2026-03-02', 'allowed', 3)];
  await usage.addUsage({ counts: [...counts, count('2026-03-03', 'rate_limited', 4)], activity: [] });
  const read = async (from: string, to: string) =>
    (await usage.getUsage(key.id, from, to)).map((c) => `${c.day} ${c.outcome} ${c.count}`).sort();
  expect(await read('2026-03-02', '2026-03-02')).toEqual(['2026-03-02 allowed 3']);
  expect(await read('2026-03-02', '2026-03-31')).toEqual(['2026-03-02 allowed 3', '2026-03-03 rate_limited 4']);
  expect(await read('2026-02-01', '2026-03-01')).toEqual(['2026-03-01 allowed 2']);
  expect(await read('2026-03-04', '2026-04-30')).toEqual([]);
  expect(await usage.getUsage('key_never_used', '2026-03-01', '2026-03-31')).toEqual([]);
}

async function keepsNewestActivity({ fx, expect, create }: ContractContext): Promise<void> {
  const usage = capabilityOf(fx.store, 'usage');
  if (!usage) return;
  const { key } = await create();
  const at = (lastUsedAt: string, lastUsedIp: string | null) => ({ keyId: key.id, lastUsedAt, lastUsedIp });
  await usage.addUsage({ counts: [], activity: [at('2026-03-01T10:00:00.000Z', '203.0.113.1')] });
  await usage.addUsage({ counts: [], activity: [at('2026-03-02T10:00:00.000Z', '203.0.113.2')] });
  expect(await usage.getActivity(key.id)).toEqual(at('2026-03-02T10:00:00.000Z', '203.0.113.2'));
  await usage.addUsage({ counts: [], activity: [at('2026-03-01T12:00:00.000Z', '203.0.113.3')] });
  expect(await usage.getActivity(key.id)).toEqual(at('2026-03-02T10:00:00.000Z', '203.0.113.2'));
  await usage.addUsage({ counts: [], activity: [at('2026-03-03T10:00:00.000Z', null)] });
  expect(await usage.getActivity(key.id)).toEqual(at('2026-03-03T10:00:00.000Z', null));
}

/** The key-store cases that pin the decisions above. */
export const PINNED_CASES: readonly ContractCase[] = [
  [
    'refuses a second key with the id of a stored one and another digest, and keeps the first',
    refusesSameIdOtherDigest,
  ],
  ['leaves a field the patch holds as undefined as it was', keepsUndefinedPatchFields],
  ['announces each write to its subscribers with its type, id, digest, account and version', announcesEachWrite],
  ["reads a key's usage counts of the days in the range asked, both ends included", readsUsageByDay],
  ["keeps a key's newest activity: a later one replaces it, an earlier one does not", keepsNewestActivity],
];
