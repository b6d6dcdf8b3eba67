// A lookup through CachedKeyStore is bounded by the cache's own timeout: `authenticate` arms no second
// timer for a store whose `timeout` is no longer than its own (the rule limiters follow), and a store
// that never answers still gets 503 at the cache's timeout.
import { authenticate, CachedKeyStore, generateKey, type KeyStore } from 'keygate';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hangingStore } from '../support/fixtures.js';

const request = () => ({ headers: { 'x-api-key': generateKey({ mode: 'live' }) }, ip: '203.0.113.7' });

// Timers armed by `run`, by delay: lru-cache keeps short ones of its own, so only the lookups' count.
function timersArmedBy(run: () => unknown): { result: unknown; delays: number[] } {
  const delays: number[] = [];
  const original = globalThis.setTimeout;
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return original(fn, ms);
  }) as typeof setTimeout);
  try {
    return { result: run(), delays };
  } finally {
    spy.mockRestore();
  }
}

describe('one timer per store lookup', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a CachedKeyStore miss arms one 2 s timer and still answers 503 at its timeout', async () => {
    const cached = new CachedKeyStore(hangingStore);
    const { result, delays } = timersArmedBy(() => authenticate(request(), cached));
    expect(delays.filter((ms) => ms === 2000)).toHaveLength(1);
    let settled = false;
    void (result as Promise<unknown>).then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a cache whose timeout is longer than authenticate’s keeps authenticate’s timer, which answers first', async () => {
    const cached = new CachedKeyStore(hangingStore, { timeout: 5000 });
    const { result, delays } = timersArmedBy(() => authenticate(request(), cached, { timeout: 100 }));
    expect(delays.filter((ms) => ms === 5000 || ms === 100).sort((a, b) => a - b)).toEqual([100, 5000]);
    await vi.advanceTimersByTimeAsync(100);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a store without a timeout of its own is still bounded by authenticate’s', async () => {
    const store: KeyStore = { findByHash: () => new Promise(() => {}) };
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeout: 300 }));
    expect(delays.filter((ms) => ms === 300)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(300);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a store that claims a timeout of 0 or of no number is not trusted to give up', async () => {
    for (const timeout of [0, Number.NaN, '10']) {
      const store = { timeout, findByHash: () => new Promise(() => {}) } as unknown as KeyStore;
      const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeout: 300 }));
      expect(delays.filter((ms) => ms === 300)).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(300);
      await expect(result).resolves.toMatchObject({ status: 503, code: 'key_store_unavailable' });
    }
  });
});
