import { authenticate, KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';
import { rejection } from '../rate-limit/support/rejection.js';

function manager() {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store }) };
}
const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };
const perMinute = { limit: 100, windowMs: 60_000 };

const BAD: [string, unknown, string][] = [
  ['a number', 100, 'rateLimit'],
  ['a string', '100/1m', 'rateLimit'],
  ['a list of numbers', [100, 60_000], 'rateLimit[0]'],
  ['an empty list', [], 'rateLimit'],
  ['a list entry without a name', [{ limit: 100, windowMs: 60_000 }], 'rateLimit[0].name'],
  ['false', false, 'rateLimit'],
  ['a limit of 0', { limit: 0, windowMs: 60_000 }, 'rateLimit.limit'],
  ['a negative limit', { limit: -1, windowMs: 60_000 }, 'rateLimit.limit'],
  ['a fractional limit', { limit: 2.5, windowMs: 60_000 }, 'rateLimit.limit'],
  ['a limit as text', { limit: '100', windowMs: 60_000 }, 'rateLimit.limit'],
  ['a missing limit', { windowMs: 60_000 }, 'rateLimit.limit'],
  ['a window of 0', { limit: 100, windowMs: 0 }, 'rateLimit.windowMs'],
  ['a negative window', { limit: 100, windowMs: -1 }, 'rateLimit.windowMs'],
  ['a NaN window', { limit: 100, windowMs: Number.NaN }, 'rateLimit.windowMs'],
  ['an infinite window', { limit: 100, windowMs: Number.POSITIVE_INFINITY }, 'rateLimit.windowMs'],
  ['a window over 366 days', { limit: 100, windowMs: 367 * 86_400_000 }, 'rateLimit.windowMs'],
  ['a missing window', { limit: 100 }, 'rateLimit.windowMs'],
  ['a misspelt member', { limit: 100, windowMs: 60_000, window: 60_000 }, 'rateLimit.window'],
];

describe('a key’s rateLimit', () => {
  it('is null unless given, and shown in the public view when given', async () => {
    const { keys } = manager();
    expect((await keys.create(base)).key.rateLimit).toBe(null);
    const { key } = await keys.create({ ...base, rateLimit: perMinute });
    expect(key.rateLimit).toEqual(perMinute);
    expect((await keys.get(key.id))?.rateLimit).toEqual(perMinute);
    expect((await keys.list('acct_1')).map((k) => k.rateLimit)).toEqual([null, perMinute]);
  });

  it('reaches authenticate’s public view of the key', async () => {
    const { store, keys } = manager();
    const { secret } = await keys.create({ ...base, rateLimit: perMinute });
    expect(await authenticate({ headers: { 'x-api-key': secret } }, store)).toMatchObject({
      ok: true,
      key: { rateLimit: perMinute },
    });
  });

  it('is set, changed and removed (null) by update; an update without it keeps it', async () => {
    const { keys } = manager();
    const { key } = await keys.create(base);
    expect(await keys.update(key.id, { rateLimit: perMinute })).toMatchObject({ rateLimit: perMinute, version: 2 });
    expect(await keys.update(key.id, { name: 'renamed' })).toMatchObject({ rateLimit: perMinute });
    expect(await keys.update(key.id, { rateLimit: { limit: 5, windowMs: 1000 } })).toMatchObject({
      rateLimit: { limit: 5, windowMs: 1000 },
    });
    expect(await keys.update(key.id, { rateLimit: null })).toMatchObject({ rateLimit: null, version: 5 });
  });

  it('is kept by rotate: the successor has the same limit', async () => {
    const { keys } = manager();
    const { key } = await keys.create({ ...base, rateLimit: perMinute });
    const next = await keys.rotate(key.id);
    expect(next.key).toMatchObject({ rotatedFrom: key.id, rateLimit: perMinute });
  });

  it('cannot be changed in place through the returned view or record', async () => {
    const { store, keys } = manager();
    const { key } = await keys.create({ ...base, rateLimit: perMinute });
    expect(Object.isFrozen(key.rateLimit)).toBe(true);
    expect(Object.isFrozen((await store.findById(key.id))?.rateLimit)).toBe(true);
  });

  it.each(BAD)('refuses %s at create with invalid_input naming %j, and writes nothing', async (_, rateLimit, field) => {
    const { keys } = manager();
    const err = await rejection(keys.create({ ...base, rateLimit } as never));
    expect(err).toMatchObject({ code: 'invalid_input', field });
    expect(await keys.list('acct_1')).toEqual([]);
  });

  it.each(BAD)(
    'refuses %s at update with invalid_input naming %j, and changes nothing',
    async (_, rateLimit, field) => {
      const { keys } = manager();
      const { key } = await keys.create({ ...base, rateLimit: perMinute });
      const err = await rejection(keys.update(key.id, { rateLimit } as never));
      expect(err).toMatchObject({ code: 'invalid_input', field });
      expect(await keys.get(key.id)).toMatchObject({ rateLimit: perMinute, version: 1 });
    },
  );
});
