// A bounded map whose entries expire: the cache's bookkeeping, about 55 bytes per entry (a Map entry
// from the key to a slot number, then the value and its deadline in two arrays), where a
// general-purpose LRU library kept about 70 and a per-entry object would cost 40 more.

// Milliseconds on a clock that never steps back (a wall clock set back would stretch every TTL). A
// reading costs about 60 ns, as much as the rest of a cache hit: it is taken once a millisecond at
// most and reused meanwhile, as lru-cache did (so an entry may be read up to that long past its TTL).
let readingMs = 0;
function monotonicMs(): number {
  if (readingMs === 0) {
    readingMs = performance.now();
    const timer: unknown = setTimeout(() => {
      readingMs = 0;
    }, 1);
    (timer as { unref?: () => void }).unref?.();
  }
  return readingMs;
}

/**
 * At most `max` entries, each readable for `ttlMs` milliseconds after it was set, never after. When
 * full, a new entry evicts the one set longest ago.
 *
 * @example
 * const seen = new ExpiringMap<true>(10_000, 5_000); // 10,000 entries, 5 seconds each
 * seen.set(digest, true);
 * seen.get(digest); // true, for 5 seconds
 */
export class ExpiringMap<V> {
  private readonly slots = new Map<string, number>();
  // By slot, `max` of each, allocated once (as lru-cache did): a full cache has no room to spare.
  private readonly values: (V | undefined)[];
  private readonly deadlines: Float64Array;
  // Slots never used yet start at `used`; slots freed by a deletion are reused first.
  private used = 0;
  private readonly free: number[] = [];

  /** `max` entries at most; each lives `ttlMs` milliseconds. */
  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
  ) {
    this.values = new Array(max);
    this.deadlines = new Float64Array(max);
  }

  /** How many entries are held (some may have expired and not been dropped yet). */
  get size(): number {
    return this.slots.size;
  }

  /** The value set for `key` if it has not expired; an expired entry is dropped. */
  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    if ((this.deadlines[slot] as number) > monotonicMs()) return this.values[slot];
    this.drop(key, slot);
    return undefined;
  }

  /** Sets `key` for `ttlMs` from now (as the newest entry), evicting the oldest when full. */
  set(key: string, value: V): void {
    this.delete(key);
    if (this.slots.size >= this.max) {
      const oldest = this.slots.keys().next().value as string;
      this.drop(oldest, this.slots.get(oldest) as number);
    }
    const slot = this.free.pop() ?? this.used++;
    this.values[slot] = value;
    this.deadlines[slot] = monotonicMs() + this.ttlMs;
    this.slots.set(key, slot);
  }

  /** Forgets `key`. */
  delete(key: string): void {
    const slot = this.slots.get(key);
    if (slot !== undefined) this.drop(key, slot);
  }

  /** Forgets everything. */
  clear(): void {
    this.slots.clear();
    this.values.fill(undefined);
    this.used = 0;
    this.free.length = 0;
  }

  private drop(key: string, slot: number): void {
    this.slots.delete(key);
    this.values[slot] = undefined;
    this.free.push(slot);
  }
}
