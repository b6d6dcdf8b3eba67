import { type ApiKeyRecord, KeyManager, KeyStoreUnavailableError, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';

/** A memory store whose next `insert` fails as a store that went away would; everything else works. */
class FlakyInsertStore extends MemoryKeyStore {
  failNextInsert = false;
  override async insert(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    if (this.failNextInsert) {
      this.failNextInsert = false;
      throw new KeyStoreUnavailableError('store went away', new Error('ECONNRESET'));
    }
    return super.insert(record);
  }
}

function setup() {
  let now = Date.parse('2026-11-22T12:00:00Z');
  const store = new FlakyInsertStore();
  const keys = new KeyManager({ store, clock: () => now });
  const advance = (ms: number) => {
    now += ms;
  };
  return { store, keys, advance };
}

const base = { accountId: 'acct_1', name: 'ci', mode: 'live' as const };

describe('KeyManager.rotate claims the old key before it inserts the successor', () => {
  it('releases its claim when the successor cannot be inserted, so the key can be rotated again', async () => {
    const { store, keys } = setup();
    const old = await keys.create(base);
    store.failNextInsert = true;
    await expect(keys.rotate(old.key.id)).rejects.toMatchObject({ code: 'key_store_unavailable' });
    expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: null, status: 'active' });
    const next = await keys.rotate(old.key.id);
    expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: next.key.id });
    expect((await store.listByAccount('acct_1')).filter((r) => r.rotatedFrom === old.key.id)).toHaveLength(1);
  });

  it('restores the old key’s expiry too when a rotation with graceMs cannot insert the successor', async () => {
    const { store, keys } = setup();
    const old = await keys.create(base);
    store.failNextInsert = true;
    await expect(keys.rotate(old.key.id, { graceMs: 0 })).rejects.toMatchObject({ code: 'key_store_unavailable' });
    expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: null, expiresAt: null, status: 'active' });
  });

  it('treats a claim whose successor never arrived as in progress for a minute, then as abandoned', async () => {
    const { store, keys, advance } = setup();
    const old = await keys.create(base);
    // What a process that died between the claim and the insert leaves behind.
    await store.update(old.key.id, { rotatedTo: 'key_never_inserted', updatedAt: '2026-11-22T12:00:00.000Z' });
    await expect(keys.rotate(old.key.id)).rejects.toMatchObject({ code: 'key_conflict', keyId: old.key.id });
    advance(60_000);
    const next = await keys.rotate(old.key.id);
    expect(next.key.rotatedFrom).toBe(old.key.id);
    expect(await keys.get(old.key.id)).toMatchObject({ rotatedTo: next.key.id });
  });

  it('refuses a rotation that lost the race for the claim with key_conflict and inserts nothing', async () => {
    const { store, keys } = setup();
    const old = await keys.create(base);
    // Another writer changes the key between this rotation's read and its claim.
    const read = store.findById.bind(store);
    store.findById = async (id) => {
      const record = await read(id);
      if (id === old.key.id) await store.update(id, { name: 'renamed meanwhile', updatedAt: record!.updatedAt });
      store.findById = read;
      return record;
    };
    await expect(keys.rotate(old.key.id)).rejects.toMatchObject({ code: 'key_conflict', keyId: old.key.id });
    expect(await store.listByAccount('acct_1')).toHaveLength(1);
  });
});
