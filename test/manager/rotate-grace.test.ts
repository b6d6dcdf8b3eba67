import { authenticate, CachedKeyStore, InvalidInputError, KeyManager, MemoryKeyStore } from 'keygate';
import { describe, expect, it } from 'vitest';

const HOUR = 3_600_000;

function setup() {
  let now = Date.parse('2026-11-22T12:00:00Z');
  const clock = () => now;
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store, clock });
  const auth = (secret: string, s: MemoryKeyStore | CachedKeyStore = store) =>
    authenticate({ headers: { 'x-api-key': secret } }, s, { clock });
  const advance = (ms: number) => {
    now += ms;
  };
  return { store, keys, auth, advance };
}

const base = { accountId: 'acct_1', name: 'ci', mode: 'live' as const };

describe('KeyManager.rotate with graceMs', () => {
  it('the old key works until now + graceMs and is 401 expired_api_key from then on; the new key works', async () => {
    const { keys, auth, advance } = setup();
    const old = await keys.create(base);
    const next = await keys.rotate(old.key.id, { graceMs: HOUR });
    expect(await keys.get(old.key.id)).toMatchObject({
      expiresAt: '2026-11-22T13:00:00.000Z',
      rotatedTo: next.key.id,
      status: 'active',
    });
    expect(next.key.expiresAt).toBe(null);
    advance(HOUR - 1);
    expect(await auth(old.secret)).toMatchObject({ ok: true });
    advance(1);
    expect(await auth(old.secret)).toMatchObject({ ok: false, status: 401, code: 'expired_api_key' });
    expect(await auth(next.secret)).toMatchObject({ ok: true });
  });

  it('graceMs: 0 expires the old key at once, through a warm cache too', async () => {
    const { store, keys, auth } = setup();
    const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
    const old = await keys.create(base);
    expect(await auth(old.secret, cached)).toMatchObject({ ok: true });
    const next = await keys.rotate(old.key.id, { graceMs: 0 });
    expect(await auth(old.secret, cached)).toMatchObject({ status: 401, code: 'expired_api_key' });
    expect(await auth(next.secret, cached)).toMatchObject({ ok: true });
    cached.close();
  });

  it('never extends an expiry the old key already had; the new key keeps that original expiry', async () => {
    const { keys, auth, advance } = setup();
    const old = await keys.create({ ...base, expiresAt: '2026-11-22T12:30:00Z' });
    const next = await keys.rotate(old.key.id, { graceMs: 24 * HOUR });
    expect(await keys.get(old.key.id)).toMatchObject({ expiresAt: '2026-11-22T12:30:00.000Z' });
    expect(next.key.expiresAt).toBe('2026-11-22T12:30:00.000Z');
    advance(30 * 60_000);
    expect(await auth(old.secret)).toMatchObject({ code: 'expired_api_key' });
  });

  it('shortens a later expiry to the grace; the new key keeps the later one', async () => {
    const { keys } = setup();
    const old = await keys.create({ ...base, expiresAt: '2027-01-01T00:00:00Z' });
    const next = await keys.rotate(old.key.id, { graceMs: HOUR });
    expect(await keys.get(old.key.id)).toMatchObject({ expiresAt: '2026-11-22T13:00:00.000Z' });
    expect(next.key.expiresAt).toBe('2027-01-01T00:00:00.000Z');
  });

  it('without graceMs, leaves the old key as it was: it works until revoked', async () => {
    const { keys, auth, advance } = setup();
    const old = await keys.create(base);
    await keys.rotate(old.key.id);
    expect(await keys.get(old.key.id)).toMatchObject({ expiresAt: null });
    advance(365 * 24 * HOUR);
    expect(await auth(old.secret)).toMatchObject({ ok: true });
  });

  it.each([
    ['a negative grace', -1],
    ['an infinite grace', Number.POSITIVE_INFINITY],
    ['NaN', Number.NaN],
    ['a string', '1h'],
    ['null', null],
  ])('refuses %s with InvalidInputError naming graceMs, and writes nothing', async (_, graceMs) => {
    const { store, keys } = setup();
    const old = await keys.create(base);
    const before = await store.findById(old.key.id);
    const error = await keys.rotate(old.key.id, { graceMs: graceMs as number }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: 'graceMs' });
    expect(await store.findById(old.key.id)).toBe(before);
    expect(await store.listByAccount('acct_1')).toHaveLength(1);
  });
});
