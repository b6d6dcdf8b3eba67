// Every refusal of a management call is structured: the field, the entry's index for a list, and a
// stable reason, for every bad entry and every bad field at once, with nothing written.
import { InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';

const now = Date.parse('2026-11-22T12:00:00Z');
const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };

function manager() {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store, clock: () => now }) };
}

async function refusal(call: Promise<unknown>): Promise<InvalidInputError> {
  const error = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

describe('a refused list', () => {
  it('reports every bad allow-list entry with its index and reason, and writes nothing', async () => {
    const { store, keys } = manager();
    const allowedIps = ['203.0.113.0/24', '10/8', '10.0.0.0/8', '10.1.2.3/8', 'fe80::1%eth0', '::1/129'];
    const error = await refusal(keys.create({ ...base, allowedIps }));
    expect(error.field).toBe('allowedIps[1]');
    expect(error.issues.map(({ field, index, reason }) => ({ field, index, reason }))).toEqual([
      { field: 'allowedIps', index: 1, reason: 'unparseable' },
      { field: 'allowedIps', index: 3, reason: 'host_bits_set' },
      { field: 'allowedIps', index: 4, reason: 'not_allowed' },
      { field: 'allowedIps', index: 5, reason: 'out_of_range' },
    ]);
    expect(error.issues[1]?.message).toContain('did you mean 10.0.0.0/8');
    expect(error.message).toContain('and 1 more');
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });

  it('reports every bad permission with its index and reason', async () => {
    const { keys } = manager();
    const error = await refusal(keys.create({ ...base, permissions: ['email:verify', 'has space', '', 42 as never] }));
    expect(error.issues.map(({ index, reason }) => [index, reason])).toEqual([
      [1, 'bad_character'],
      [2, 'empty'],
      [3, 'wrong_type'],
    ]);
  });
});

describe('a refused key', () => {
  it('reports every bad field at once, in the order of the fields, the first as `field`', async () => {
    const { store, keys } = manager();
    const error = await refusal(
      keys.create({ accountId: '', name: '  ', mode: 'prod' as never, allowedIps: ['x'], expiresAt: 'soon' }),
    );
    expect(error.field).toBe('accountId');
    expect(error.issues.map(({ field, reason }) => [field, reason])).toEqual([
      ['accountId', 'empty'],
      ['name', 'empty'],
      ['allowedIps', 'unparseable'],
      ['expiresAt', 'unparseable'],
      ['mode', 'not_allowed'],
    ]);
    expect(await store.listByAccount('')).toEqual([]);
  });

  it.each([
    ['a name of 201 characters', { name: 'n'.repeat(201) }, 'name', 'too_long'],
    ['a past expiry', { expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt', 'out_of_range'],
    ['metadata that is an array', { metadata: [] }, 'metadata', 'wrong_type'],
    ['a rate limit of 0', { rateLimit: { limit: 0, windowMs: 1000 } }, 'rateLimit.limit', 'out_of_range'],
    [
      'a rate limit with a text window',
      { rateLimit: { limit: 1, windowMs: '1s' } },
      'rateLimit.windowMs',
      'wrong_type',
    ],
    [
      'a misspelt rate-limit member',
      { rateLimit: { limit: 1, windowMs: 1, window: 1 } },
      'rateLimit.window',
      'unknown_option',
    ],
  ])('%s is refused with field %s and reason %s', async (_, change, field, reason) => {
    const { keys } = manager();
    const error = await refusal(keys.create({ ...base, ...change } as never));
    expect(error.issues).toEqual([expect.objectContaining({ field, reason })]);
  });

  it('an update names the field it cannot change, and an empty update, by reason', async () => {
    const { keys } = manager();
    const { key } = await keys.create(base);
    expect((await refusal(keys.update(key.id, { mode: 'live' } as never))).issues).toEqual([
      expect.objectContaining({ field: 'mode', reason: 'not_allowed' }),
    ]);
    expect((await refusal(keys.update(key.id, {}))).issues).toEqual([
      expect.objectContaining({ field: 'changes', reason: 'empty' }),
    ]);
    const both = await refusal(keys.update(key.id, { name: '', allowedIps: ['1.2.3.4', 'nope'] }));
    expect(both.issues.map(({ field, index }) => [field, index])).toEqual([
      ['name', undefined],
      ['allowedIps', 1],
    ]);
    expect(await keys.get(key.id)).toEqual(key);
  });
});

describe('KeyManager.check', () => {
  it('returns the fields as they would be written, without a store and without throwing', () => {
    const checked = KeyManager.check(
      { ...base, name: ' ci ', permissions: ['a:b', 'a:b'], allowedIps: ['2001:DB8::/32'] },
      { now },
    );
    expect(checked).toEqual({
      ok: true,
      value: {
        accountId: 'acct_1',
        name: 'ci',
        mode: 'test',
        permissions: ['a:b'],
        allowedIps: ['2001:db8::/32'],
        expiresAt: null,
        metadata: {},
        rateLimit: null,
      },
    });
  });

  it('returns every issue of a bad input instead of throwing', () => {
    const checked = KeyManager.check({ name: 'ci', allowedIps: ['1', '2'] }, { now });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.issues.map(({ field, index, reason }) => [field, index, reason])).toEqual([
      ['accountId', undefined, 'wrong_type'],
      ['allowedIps', 0, 'unparseable'],
      ['allowedIps', 1, 'unparseable'],
      ['mode', undefined, 'not_allowed'],
    ]);
  });

  it('with partial, checks only the fields given (as for an update or one field)', () => {
    expect(KeyManager.check({ allowedIps: ['10.0.0.0/8'] }, { partial: true })).toEqual({
      ok: true,
      value: { allowedIps: ['10.0.0.0/8'] },
    });
    const checked = KeyManager.check({ name: '\u200b' }, { partial: true });
    expect(checked).toEqual({ ok: false, issues: [expect.objectContaining({ field: 'name' })] });
  });

  it('checks an expiry against `now`', () => {
    const at = '2026-11-23T00:00:00.000Z';
    expect(KeyManager.check({ expiresAt: at }, { now, partial: true }).ok).toBe(true);
    expect(KeyManager.check({ expiresAt: at }, { now: Date.parse(at), partial: true })).toMatchObject({
      ok: false,
      issues: [{ field: 'expiresAt', reason: 'out_of_range' }],
    });
  });

  it('refuses what is not an object', () => {
    expect(KeyManager.check('ci')).toEqual({ ok: false, issues: [expect.objectContaining({ reason: 'wrong_type' })] });
  });
});

describe('InvalidInputError', () => {
  it('carries one issue of its own field when built directly (reason "invalid" unless given)', () => {
    expect(new InvalidInputError('store', 'store must be a key store').issues).toEqual([
      { field: 'store', reason: 'invalid', message: 'store must be a key store' },
    ]);
    expect(new InvalidInputError('mode', 'bad mode', { reason: 'not_allowed' }).issues[0]?.reason).toBe('not_allowed');
  });
});
