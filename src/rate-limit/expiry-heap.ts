/** One window's end, as the heap holds it: when, and whose. */
export interface Expiry {
  readonly end: number;
  readonly key: string;
}

/**
 * A binary min-heap of window ends, so that the memory limiter finds an ended window in O(log n)
 * instead of scanning. Entries are never removed when a window reopens or its key is evicted; the
 * owner skips such stale entries when they reach the top and rebuilds the heap when they pile up.
 *
 * @example
 * const heap = new ExpiryHeap();
 * heap.push({ end: 1000, key: 'key_a' });
 * heap.peek(); // { end: 1000, key: 'key_a' }
 */
export class ExpiryHeap {
  private items: Expiry[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Expiry | undefined {
    return this.items[0];
  }

  push(item: Expiry): void {
    const a = this.items;
    let i = a.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((a[parent] as Expiry).end <= item.end) break;
      a[i] = a[parent] as Expiry;
      i = parent;
    }
    a[i] = item;
  }

  pop(): Expiry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Replaces the content with `items` in O(n). */
  reset(items: Expiry[]): void {
    this.items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftDown(i: number): void {
    const a = this.items;
    const item = a[i] as Expiry;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= a.length) break;
      const right = child + 1;
      if (right < a.length && (a[right] as Expiry).end < (a[child] as Expiry).end) child = right;
      if ((a[child] as Expiry).end >= item.end) break;
      a[i] = a[child] as Expiry;
      i = child;
    }
    a[i] = item;
  }
}
