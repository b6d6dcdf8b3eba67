// The cache's bounded map: entries readable for their TTL and never after, the one set longest ago
// evicted first when full, freed slots reused.
import { describe, expect, it } from 'vitest';
import { ExpiringMap } from '../../src/store/expiring-map.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ExpiringMap', () => {
  it('answers an entry until its TTL has passed, then forgets it', async () => {
    const map = new ExpiringMap<string>(10, 40);
    map.set('a', 'A');
    expect(map.get('a')).toBe('A');
    await pause(60);
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it('when full, evicts the entry set longest ago; setting a key again makes it the newest', () => {
    const map = new ExpiringMap<number>(3, 60_000);
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      map.set(k, v);
    map.set('a', 10); // now the newest
    map.set('d', 4); // evicts b
    expect([map.get('a'), map.get('b'), map.get('c'), map.get('d')]).toEqual([10, undefined, 3, 4]);
    expect(map.size).toBe(3);
  });

  it('never holds more than its bound, reusing the slots deletions free', () => {
    const map = new ExpiringMap<number>(100, 60_000);
    for (let i = 0; i < 1_000; i++) {
      map.set(`k${i}`, i);
      if (i % 3 === 0) map.delete(`k${i}`);
    }
    expect(map.size).toBeLessThanOrEqual(100);
    expect(map.get('k998')).toBe(998);
    expect(map.get('k999')).toBeUndefined();
    map.clear();
    expect([map.size, map.get('k998')]).toEqual([0, undefined]);
  });
});
