import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore, UsageRecorder } from 'keygate';
import { describe, expect, it } from 'vitest';

const MINUTE = 60_000;

describe('rotation walks the four steps of the specification, confirmed by real traffic', () => {
  it('create with the same permissions, switch, confirm, revoke', async () => {
    let now = Date.parse('2026-11-22T09:00:00Z');
    const clock = () => now;
    const store = new MemoryKeyStore();
    const cached = new CachedKeyStore(store);
    const usage = new UsageRecorder({ store, intervalMs: 0, clock });
    const keys = new KeyManager({ store: cached, clock, usage });
    const send = (secret: string) =>
      authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.5' }, cached, {
        permissions: ['email:verify'],
        onResult: usage.record,
        clock,
      });

    const old = await keys.create({
      accountId: 'acct_1',
      name: 'production',
      mode: 'live',
      permissions: ['email:verify'],
      allowedIps: ['203.0.113.0/24'],
    });
    expect((await send(old.secret)).ok).toBe(true);
    now += MINUTE;

    // Step 1: a new key with the same permissions.
    const next = await keys.rotate(old.key.id);
    expect(next.key.permissions).toEqual(old.key.permissions);
    let status = await keys.rotationStatus(old.key.id);
    expect(status).toMatchObject({ step: 'created', newKeyUsed: false, safeToRevoke: false, newKeyId: next.key.id });
    await expect(keys.revoke(old.key.id, { quietForMs: 15 * MINUTE })).rejects.toMatchObject({ code: 'key_in_use' });

    // Step 2: the application switches; for a while both keys carry traffic.
    now += MINUTE;
    expect((await send(next.secret)).ok).toBe(true);
    expect((await send(old.secret)).ok).toBe(true); // a straggler instance still on the old key
    const stragglerAt = new Date(now).toISOString();
    status = await keys.rotationStatus(old.key.id);
    expect(status).toMatchObject({ step: 'switched', newKeyUsed: true, oldKeyQuietForMs: 0, safeToRevoke: false });

    // Step 3: confirm. Only the new key is used; after the quiet period the old key is safe to revoke.
    for (let i = 0; i < 15; i++) {
      now += MINUTE;
      expect((await send(next.secret)).ok).toBe(true);
    }
    status = await keys.rotationStatus(old.key.id);
    expect(status).toMatchObject({ step: 'confirmed', safeToRevoke: true, oldKeyQuietForMs: 15 * MINUTE });
    expect((await keys.rotationStatus(old.key.id, { quietForMs: 30 * MINUTE })).safeToRevoke).toBe(false);

    // Step 4: revoke the old key; the new one keeps working, the old one never again.
    await keys.revoke(old.key.id, { quietForMs: 15 * MINUTE });
    expect(await send(old.secret)).toMatchObject({ code: 'revoked_api_key' });
    expect((await send(next.secret)).ok).toBe(true);
    expect((await keys.rotationStatus(old.key.id)).step).toBe('revoked');

    // Usage history stays readable on both sides of the swap.
    const oldUsage = await keys.usage(old.key.id, { from: '2026-11-22', to: '2026-11-22' });
    const newUsage = await keys.usage(next.key.id, { from: '2026-11-22', to: '2026-11-22' });
    expect(oldUsage).toMatchObject({ allowed: 2, denied: 1, deniedBy: { revoked_api_key: 1 } });
    // Last used: the straggler's allowed request, not the refusal after the revocation.
    expect(oldUsage.lastUsedAt).toBe(stragglerAt);
    expect(newUsage).toMatchObject({ allowed: 17, denied: 0 });
    expect((await keys.get(next.key.id))?.rotatedFrom).toBe(old.key.id);
  });

  it('rotationStatus of a key that was never rotated is a clear error', async () => {
    const keys = new KeyManager({ store: new MemoryKeyStore() });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    await expect(keys.rotationStatus(key.id)).rejects.toMatchObject({ code: 'invalid_input', field: 'id' });
  });
});
