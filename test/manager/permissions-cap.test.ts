// A key holds at most KeyManager.MAX_PERMISSIONS (100) permissions, each at most 128 characters long.
import { KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';

const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };
const permissions = (n: number) => Array.from({ length: n }, (_, i) => `email:scope${i}`);

function manager() {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store }) };
}

describe('permissions per key', () => {
  it('are capped at 100, a number the manager names', () => {
    expect(KeyManager.MAX_PERMISSIONS).toBe(100);
  });

  it('exactly 100 are accepted', async () => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, permissions: permissions(100) });
    expect(key.permissions).toHaveLength(100);
  });

  it.each([101, 50_000])(
    '%i are refused (invalid_input, permissions, too_many, the cap stated); nothing is written',
    async (n) => {
      const { store, keys } = manager();
      const refused = keys.create({ ...base, permissions: permissions(n) });
      await expect(refused).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'permissions',
        issues: [expect.objectContaining({ field: 'permissions', reason: 'too_many' })],
      });
      await expect(refused).rejects.toThrow(/at most 100/);
      expect(await store.listByAccount('acct_1')).toEqual([]);
    },
  );

  it('an update to 50,000 is refused and the key keeps its permissions', async () => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, permissions: ['email:verify'] });
    await expect(keys.update(key.id, { permissions: permissions(50_000) })).rejects.toMatchObject({
      field: 'permissions',
      issues: [expect.objectContaining({ reason: 'too_many' })],
    });
    expect(await keys.get(key.id)).toEqual(key);
  });
});

describe('a permission name', () => {
  it('of 128 characters is accepted and of 129 refused (too_long)', async () => {
    const { keys } = manager();
    const longest = 'a.'.repeat(64); // no run of letters a pasted key would have
    expect((await keys.create({ ...base, permissions: [longest] })).key.permissions).toEqual([longest]);
    await expect(keys.create({ ...base, permissions: [`${longest}b`] })).rejects.toMatchObject({
      field: 'permissions[0]',
      issues: [expect.objectContaining({ field: 'permissions', index: 0, reason: 'too_long' })],
    });
  });
});
