// CachedKeyStore learns what the store it wraps offers from that store's declared capabilities, never
// from its method names, and declares its own: `wrapper`, `deadline`, and the wrapped store's
// `changes` and `usage` when (and only when) the wrapped store declares them.
import {
  authenticate,
  CachedKeyStore,
  capabilityOf,
  KeyManager,
  type KeyStore,
  MemoryKeyStore,
  UsageRecorder,
} from 'keygate';
import { CAPABILITIES, type KeyChangeEvent } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

const header = (secret: string) => ({ headers: { 'x-api-key': secret } });

describe('CachedKeyStore capabilities', () => {
  it('declares the store it wraps and its own deadline (timeoutMs)', () => {
    const memory = new MemoryKeyStore();
    const cached = new CachedKeyStore(memory, { timeoutMs: 750 });
    expect(capabilityOf(cached, 'wrapper')?.wrapped).toBe(memory);
    expect(capabilityOf(cached, 'deadline')?.timeoutMs).toBe(750);
  });

  it('forwards the changes of the store it wraps: a write there reaches its subscribers and evicts', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const cached = new CachedKeyStore(memory, { ttlMs: 3_600_000 });
    const seen: KeyChangeEvent[] = [];
    const off = capabilityOf(cached, 'changes')?.subscribe((change) => void seen.push(change));
    expect((await authenticate(header(secret), cached)).ok).toBe(true);
    await keys.revoke(key.id); // through the wrapped store, not the cache
    expect(seen).toMatchObject([{ type: 'revoked', id: key.id }]);
    expect(await authenticate(header(secret), cached)).toMatchObject({ code: 'revoked_api_key' });
    off?.();
  });

  it('forwards the usage of the store it wraps: the manager and the recorder read it through the cache', async () => {
    const memory = new MemoryKeyStore();
    const cached = new CachedKeyStore(memory);
    expect(capabilityOf(cached, 'usage')).toBe(capabilityOf(memory, 'usage'));
    const recorder = new UsageRecorder({ store: cached, intervalMs: 0 });
    const keys = new KeyManager({ store: cached, usage: recorder });
    const { secret, key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    await authenticate(header(secret), cached, { onResult: recorder.record });
    expect(await keys.usage(key.id)).toMatchObject({ allowed: 1, denied: 0 });
  });

  it('declares neither changes nor usage over a store that declares none', async () => {
    const memory = new MemoryKeyStore();
    const plain: KeyStore = { findByHash: (hash) => memory.findByHash(hash) };
    const cached = new CachedKeyStore(plain);
    expect(capabilityOf(cached, 'changes')).toBeUndefined();
    expect(capabilityOf(cached, 'usage')).toBeUndefined();
    expect(() => new UsageRecorder({ store: cached })).toThrow(expect.objectContaining({ field: 'store' }));
  });

  it('does not subscribe to, or count usage in, a store that has methods by those names but declares nothing', async () => {
    const memory = new MemoryKeyStore();
    const keys = new KeyManager({ store: memory });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const calls: string[] = [];
    const lookalike = {
      findByHash: (hash: string) => memory.findByHash(hash),
      subscribe: () => {
        calls.push('subscribe');
        return () => {};
      },
      addUsage: async () => void calls.push('addUsage'),
      getUsage: async () => [],
      getActivity: async () => null,
    };
    const cached = new CachedKeyStore(lookalike);
    expect((await authenticate(header(secret), cached)).ok).toBe(true);
    expect(calls).toEqual([]);
    expect(capabilityOf(cached, 'changes')).toBeUndefined();
    expect(capabilityOf(cached, 'usage')).toBeUndefined();
    expect(() => new UsageRecorder({ store: lookalike })).toThrow(expect.objectContaining({ field: 'store' }));
  });

  it('subscribes to a store that declares changes, whatever its methods are called', async () => {
    const listeners: Array<(change: KeyChangeEvent) => void> = [];
    const changes = {
      subscribe(listener: (change: KeyChangeEvent) => void) {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    };
    const store = { [CAPABILITIES]: { changes }, findByHash: async () => null };
    const cached = new CachedKeyStore(store);
    expect(listeners).toHaveLength(1);
    cached.close();
    expect(listeners).toHaveLength(0);
  });
});
