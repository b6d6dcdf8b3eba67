// A call that needs something the store does not offer is refused with UnsupportedError (code
// `unsupported`, field `store`), which a caller can tell apart from bad input without reading text.
import {
  CachedKeyStore,
  KeyManager,
  type KeyStore,
  MemoryKeyStore,
  UnsupportedError,
  type WritableKeyStore,
} from 'keygate';
import { describe, expect, it } from 'vitest';

/** A store that reads and writes keys but keeps no usage statistics. */
function storeWithoutUsage(): WritableKeyStore {
  const inner = new MemoryKeyStore();
  return {
    findByHash: (hash) => inner.findByHash(hash),
    findById: (id) => inner.findById(id),
    listByAccount: (accountId) => inner.listByAccount(accountId),
    insert: (record) => inner.insert(record),
    update: (id, patch, condition) => inner.update(id, patch, condition),
  };
}

/** A store that can only look keys up. */
const readOnly = (): KeyStore => ({ findByHash: async () => null });

const unsupported = { name: 'UnsupportedError', code: 'unsupported', field: 'store' };

describe('a store without a capability the call needs', () => {
  it('KeyManager.usage on a store that keeps no usage throws UnsupportedError', async () => {
    const keys = new KeyManager({ store: storeWithoutUsage() });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const error = await keys.usage(key.id).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UnsupportedError);
    expect(error).toMatchObject(unsupported);
  });

  it('a write through a CachedKeyStore over a read-only store throws UnsupportedError and writes nothing', async () => {
    const keys = new KeyManager({ store: new CachedKeyStore(readOnly()) });
    await expect(keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' })).rejects.toMatchObject(unsupported);
    await expect(keys.list('acct_1')).rejects.toMatchObject(unsupported);
  });

  it('usage through a CachedKeyStore over a store that keeps none throws UnsupportedError', async () => {
    const keys = new KeyManager({ store: new CachedKeyStore(storeWithoutUsage()) });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    const error = await keys.usage(key.id).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UnsupportedError);
    expect(error).toMatchObject(unsupported);
  });

  it('a store refused at construction is still bad input (InvalidInputError, field store)', () => {
    expect(() => new KeyManager({ store: readOnly() as WritableKeyStore })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'store' }),
    );
  });
});
