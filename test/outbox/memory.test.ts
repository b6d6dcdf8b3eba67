import { capabilityOf, KeyManager, MemoryKeyStore } from 'keygate';
import type { Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import { MemoryOutbox } from 'keygate/webhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

describeOutboxContract(
  'MemoryKeyStore',
  async () => ({ outbox: capabilityOf(new MemoryKeyStore({ outbox: new MemoryOutbox() }), 'outbox') as Outbox }),
  { describe, it, expect, beforeEach, afterEach },
);

describe('a KeyManager over a store with an outbox', () => {
  it('writes each key event to the outbox with its write, and none for a write that is refused', async () => {
    const store = new MemoryKeyStore({ outbox: new MemoryOutbox() });
    const outbox = capabilityOf(store, 'outbox') as Outbox;
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await keys.revoke(key.id);
    await expect(keys.revoke(key.id)).rejects.toMatchObject({ code: 'key_revoked' });
    await expect(keys.update(key.id, { name: 'x' })).rejects.toMatchObject({ code: 'key_revoked' });
    const log = await outbox.deliveries({ accountId: 'acct_1' });
    expect(log.map((d) => d.eventType)).toEqual(['key.revoked', 'key.created']);
  });
});

describe('a MemoryKeyStore without an outbox', () => {
  it('declares none, and a KeyManager over it writes keys as before', async () => {
    const store = new MemoryKeyStore();
    expect(capabilityOf(store, 'outbox')).toBe(undefined);
    const { key } = await new KeyManager({ store }).create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    expect(await store.findById(key.id)).toMatchObject({ name: 'ci' });
  });
});
