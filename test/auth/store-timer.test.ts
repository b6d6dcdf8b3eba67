// A store that declares a `deadline` no longer than authenticate's `timeoutMs` (CachedKeyStore does)
// bounds its own lookups: `authenticate` arms no second timer for it (the rule limiters follow). Any
// other store, whatever properties it has, is bounded by authenticate's timer.
import { authenticate, CachedKeyStore, generateKey, type KeyStore } from 'keygate';
import { CAPABILITIES } from 'keygate/store-kit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hangingStore } from '../support/fixtures.js';

const request = () => ({ headers: { 'x-api-key': generateKey({ mode: 'live' }) }, ip: '203.0.113.7' });

// Timers armed by `run`, by delay: the cache keeps short ones of its own (its clock reading), so only the lookups' count.
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

  it('a cache whose timeoutMs is longer than authenticate’s keeps authenticate’s timer, which answers first', async () => {
    const cached = new CachedKeyStore(hangingStore, { timeoutMs: 5000 });
    const { result, delays } = timersArmedBy(() => authenticate(request(), cached, { timeoutMs: 100 }));
    expect(delays.filter((ms) => ms === 5000 || ms === 100).sort((a, b) => a - b)).toEqual([100, 5000]);
    await vi.advanceTimersByTimeAsync(100);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a store that declares a deadline gets no second timer: its own answers 503', async () => {
    const store = {
      [CAPABILITIES]: { deadline: { timeoutMs: 100 } },
      findByHash: () => new Promise((_, reject) => setTimeout(() => reject(new Error('gave up')), 100)),
    } as KeyStore;
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeoutMs: 300 }));
    expect(delays).toEqual([100]);
    await vi.advanceTimersByTimeAsync(100);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a store that declares no deadline is bounded by authenticate’s timer', async () => {
    const store: KeyStore = { findByHash: () => new Promise(() => {}) };
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeoutMs: 300 }));
    expect(delays).toEqual([300]);
    await vi.advanceTimersByTimeAsync(300);
    await expect(result).resolves.toMatchObject({ ok: false, status: 503, code: 'key_store_unavailable' });
  });

  it('a store with timeout properties but no deadline capability still gets authenticate’s timer', async () => {
    const store = { timeout: 10, timeoutMs: 10, findByHash: () => new Promise(() => {}) } as KeyStore;
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeoutMs: 300 }));
    expect(delays).toEqual([300]);
    await vi.advanceTimersByTimeAsync(300);
    await expect(result).resolves.toMatchObject({ status: 503, code: 'key_store_unavailable' });
  });

  it.each([0, Number.NaN, '10'])('a store whose deadline is %j is not trusted to give up', async (timeoutMs) => {
    const store = {
      [CAPABILITIES]: { deadline: { timeoutMs } },
      findByHash: () => new Promise(() => {}),
    } as unknown as KeyStore;
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeoutMs: 300 }));
    expect(delays).toEqual([300]);
    await vi.advanceTimersByTimeAsync(300);
    await expect(result).resolves.toMatchObject({ status: 503, code: 'key_store_unavailable' });
  });

  it('a deadline longer than authenticate’s keeps authenticate’s timer', async () => {
    const store = {
      [CAPABILITIES]: { deadline: { timeoutMs: 5000 } },
      findByHash: () => new Promise(() => {}),
    } as KeyStore;
    const { result, delays } = timersArmedBy(() => authenticate(request(), store, { timeoutMs: 300 }));
    expect(delays).toEqual([300]);
    await vi.advanceTimersByTimeAsync(300);
    await expect(result).resolves.toMatchObject({ status: 503, code: 'key_store_unavailable' });
  });
});
