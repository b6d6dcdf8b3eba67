import {
  authenticate,
  CachedKeyStore,
  InvalidInputError,
  type KeygateEvent,
  KeyManager,
  KeyRevokedError,
  MemoryKeyStore,
  UsageRecorder,
} from 'keygate';
import { describe, expect, it } from 'vitest';

function setup() {
  let now = Date.parse('2026-11-22T12:00:00Z');
  const store = new MemoryKeyStore();
  const events: KeygateEvent[] = [];
  const clock = () => now;
  const keys = new KeyManager({ store, clock, onEvent: (e) => void events.push(e) });
  const auth = (secret: string, s = store as MemoryKeyStore | CachedKeyStore) =>
    authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, s, { clock });
  const advance = (ms: number) => {
    now += ms;
  };
  return { store, keys, events, auth, advance };
}

const base = { accountId: 'acct_1', name: 'ci', mode: 'live' as const };

describe('KeyManager.suspend and resume', () => {
  it('a suspended key is refused with 403 key_suspended, and works again once resumed', async () => {
    const { keys, auth } = setup();
    const { secret, key } = await keys.create(base);
    const suspended = await keys.suspend(key.id, { reason: 'invoice 2026-11 unpaid' });
    expect(suspended).toMatchObject({
      status: 'suspended',
      suspendedAt: '2026-11-22T12:00:00.000Z',
      suspendedReason: 'invoice 2026-11 unpaid',
      version: 2,
    });
    expect(await auth(secret)).toMatchObject({
      ok: false,
      status: 403,
      code: 'key_suspended',
      message: 'The API key is suspended. Contact the account owner.',
      key: { id: key.id, status: 'suspended' },
    });
    const resumed = await keys.resume(key.id);
    expect(resumed).toMatchObject({ status: 'active', suspendedAt: null, suspendedReason: null, version: 3 });
    expect(await auth(secret)).toMatchObject({ ok: true, status: 200 });
  });

  it('a new key shows suspendedAt and suspendedReason as null', async () => {
    const { keys } = setup();
    const { key } = await keys.create(base);
    expect(key).toMatchObject({ status: 'active', suspendedAt: null, suspendedReason: null });
  });

  it('takes effect at once through a CachedKeyStore in the same process, both ways', async () => {
    const { store, keys, auth } = setup();
    const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
    const { secret, key } = await keys.create(base);
    expect(await auth(secret, cached)).toMatchObject({ ok: true });
    await keys.suspend(key.id);
    expect(await auth(secret, cached)).toMatchObject({ code: 'key_suspended' });
    await keys.resume(key.id);
    expect(await auth(secret, cached)).toMatchObject({ ok: true });
    cached.close();
  });

  it('is checked after expiry and before the allow list and permissions', async () => {
    const { keys, auth, advance } = setup();
    const expiring = await keys.create({ ...base, expiresAt: '2026-11-22T13:00:00Z' });
    const narrow = await keys.create({ ...base, allowedIps: ['198.51.100.0/24'], permissions: [] });
    await keys.suspend(expiring.key.id);
    await keys.suspend(narrow.key.id);
    // The client address is outside narrow's allow list: suspension is still what decides.
    expect(await auth(narrow.secret)).toMatchObject({ status: 403, code: 'key_suspended' });
    expect(await auth(expiring.secret)).toMatchObject({ code: 'key_suspended' });
    advance(3_600_000);
    expect(await auth(expiring.secret)).toMatchObject({ status: 401, code: 'expired_api_key' });
  });

  it('suspending a suspended key and resuming an active one change nothing and return the view', async () => {
    const { keys, events } = setup();
    const { key } = await keys.create(base);
    expect(await keys.resume(key.id)).toMatchObject({ status: 'active', version: 1 });
    await keys.suspend(key.id, { reason: 'first' });
    const again = await keys.suspend(key.id, { reason: 'second' });
    expect(again).toMatchObject({ status: 'suspended', suspendedReason: 'first', version: 2 });
    expect(events.map((e) => e.type)).toEqual(['key.created', 'key.suspended']);
  });

  it('emits key.suspended with the reason and key.resumed, never a secret', async () => {
    const { keys, events } = setup();
    const { secret, key } = await keys.create(base);
    await keys.suspend(key.id, { reason: 'abuse report #12' });
    await keys.suspend(key.id);
    await keys.resume(key.id);
    await keys.suspend(key.id);
    expect(events.slice(1)).toMatchObject([
      { type: 'key.suspended', keyId: key.id, accountId: 'acct_1', hint: key.hint, reason: 'abuse report #12' },
      { type: 'key.resumed', keyId: key.id },
      { type: 'key.suspended', keyId: key.id, reason: null },
    ]);
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('revokes a suspended key, permanently: neither suspend nor resume brings it back', async () => {
    const { store, keys, auth } = setup();
    const { secret, key } = await keys.create(base);
    await keys.suspend(key.id, { reason: 'fraud' });
    const revoked = await keys.revoke(key.id);
    expect(revoked).toMatchObject({ status: 'revoked' });
    expect(await auth(secret)).toMatchObject({ status: 401, code: 'revoked_api_key' });
    const before = await store.findById(key.id);
    await expect(keys.resume(key.id)).rejects.toBeInstanceOf(KeyRevokedError);
    await expect(keys.suspend(key.id)).rejects.toMatchObject({ code: 'key_revoked', keyId: key.id });
    expect(await store.findById(key.id)).toBe(before);
    expect(await auth(secret)).toMatchObject({ code: 'revoked_api_key' });
  });

  it('keeps a suspended key changeable: its name and allow list can still be updated', async () => {
    const { keys } = setup();
    const { key } = await keys.create(base);
    await keys.suspend(key.id, { reason: 'review' });
    expect(await keys.update(key.id, { name: 'renamed' })).toMatchObject({
      name: 'renamed',
      status: 'suspended',
      suspendedReason: 'review',
    });
  });

  it.each([
    ['an empty reason', ''],
    ['a blank reason', '   '],
    ['a reason with a line break', 'late\nrm -rf'],
    ['a reason with a bidirectional override', 'ok \u202egnp.exe'],
    ['a reason of 501 characters', 'é'.repeat(501)],
    ['a reason that is not text', 42],
    ['a reason shaped like an API key', `mk_live_${'a'.repeat(38)}`],
  ])('refuses %s with InvalidInputError naming reason, and writes nothing', async (_, reason) => {
    const { store, keys } = setup();
    const { key } = await keys.create(base);
    const before = await store.findById(key.id);
    const error = await keys.suspend(key.id, { reason: reason as string }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ field: 'reason' });
    expect(await store.findById(key.id)).toBe(before);
  });

  it('trims the reason and takes one of 500 characters', async () => {
    const { keys } = setup();
    const a = await keys.create(base);
    const b = await keys.create(base);
    expect((await keys.suspend(a.key.id, { reason: '  unpaid  ' })).suspendedReason).toBe('unpaid');
    expect((await keys.suspend(b.key.id, { reason: 'é'.repeat(500) })).suspendedReason).toHaveLength(500);
  });

  it('counts key_suspended refusals in the key’s usage like any other denial', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store });
    const recorder = new UsageRecorder({ store, intervalMs: 0 });
    const { secret, key } = await keys.create(base);
    await keys.suspend(key.id);
    for (let i = 0; i < 3; i++) {
      await authenticate({ headers: { 'x-api-key': secret } }, store, { onResult: recorder.record });
    }
    await recorder.flush();
    const report = await keys.usage(key.id);
    expect(report.deniedBy).toEqual({ key_suspended: 3 });
    expect(report.allowed).toBe(0);
  });
});

describe('KeyManager.rotate and suspension', () => {
  it('rotates a suspended key without resuming it: the new key is active with the same fields, the old one stays suspended', async () => {
    const { store, keys } = setup();
    const { key } = await keys.create({ ...base, permissions: ['email:verify'], allowedIps: ['203.0.113.0/24'] });
    await keys.suspend(key.id, { reason: 'leaked' });
    const { secret, key: next } = await keys.rotate(key.id);
    expect(next).toMatchObject({
      status: 'active',
      rotatedFrom: key.id,
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24'],
      mode: key.mode,
      accountId: key.accountId,
    });
    expect(await keys.get(key.id)).toMatchObject({
      status: 'suspended',
      suspendedReason: 'leaked',
      rotatedTo: next.id,
    });
    expect(await authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.9' }, store)).toMatchObject({
      ok: true,
    });
  });

  it('does not rotate a key a second time while its successor is suspended', async () => {
    const { keys } = setup();
    const old = await keys.create(base);
    const next = await keys.rotate(old.key.id);
    await keys.suspend(next.key.id);
    await expect(keys.rotate(old.key.id)).rejects.toMatchObject({ code: 'key_conflict' });
  });

  it('a suspended successor is never safe to revoke the old key for', async () => {
    const { store, keys } = setup();
    const recorder = new UsageRecorder({ store, intervalMs: 0 });
    const old = await keys.create(base);
    const next = await keys.rotate(old.key.id);
    await authenticate({ headers: { 'x-api-key': next.secret } }, store, { onResult: recorder.record });
    await recorder.flush();
    expect(await keys.rotationStatus(old.key.id, { quietForMs: 0 })).toMatchObject({ safeToRevoke: true });
    await keys.suspend(next.key.id);
    expect(await keys.rotationStatus(old.key.id, { quietForMs: 0 })).toMatchObject({
      newKeyUsed: true,
      safeToRevoke: false,
      step: 'switched',
    });
  });
});
