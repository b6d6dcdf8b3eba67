/**
 * What the leasing engine keeps of every slice, whatever it is a slice of (a limiter's units, a
 * ledger's credits): when it is topped up, and the takes in flight for it.
 *
 * @example
 * const slice: LeaseSlice = { refillAt: 150 };
 */
export interface LeaseSlice {
  /** When what is left of the slice falls to this, the next is taken in the background (-1: not before a request needs it). */
  refillAt: number;
  /** A take in flight for the slice's owner: requests the slice cannot cover wait for it rather than take again. */
  taking?: Promise<void>;
  /** The background top-up in flight, if any: it settles within the wrapper's `timeoutMs`. */
  refilling?: Promise<void>;
}

/**
 * Marks a take in flight on `slice` (its `taking`), so that one take per owner runs at a time and
 * the requests it cannot cover wait for it; returns the function that ends it (clears `taking` and
 * wakes the waiters). Call that once, whether the take succeeded or failed.
 *
 * @example
 * const finish = beginTake(slice);
 * try { grant = await shared.take(...); } finally { finish(); }
 */
export function beginTake(slice: LeaseSlice): () => void {
  let done!: () => void;
  slice.taking = new Promise<void>((resolve) => {
    done = resolve;
  });
  return () => {
    slice.taking = undefined;
    done();
  };
}

/**
 * The live slice of every owner (a rate-limited key; an account and key), at most `max` of them:
 * placing one more evicts the least recently placed or used one that no take is filling, and hands
 * it to `evicted` (to give back what it holds). Iteration is in that order, least recent first.
 *
 * @example
 * const slices = new SliceStore<Slice>(10_000, (keyId, slice) => void giveBack(keyId, slice));
 * slices.place('key_1', slice);
 * slices.use('key_1'); // the slice, now the most recent
 */
export class SliceStore<S extends LeaseSlice> implements Iterable<[string, S]> {
  // Insertion order is recency (deleted and set again on use), so the first owner is the least recent.
  private readonly slices = new Map<string, S>();
  // The owner last moved to the end (the most recent), while it is there: an owner used again and
  // again keeps its place with no delete and set per request.
  private last: string | undefined;

  /**
   * @param max the most owners kept (default: no bound)
   * @param evicted what to do with a slice evicted to make room
   */
  constructor(
    private readonly max = Number.POSITIVE_INFINITY,
    private readonly evicted: (owner: string, slice: S) => void = () => {},
  ) {}

  /** How many owners have a slice. */
  get size(): number {
    return this.slices.size;
  }

  /** The owner's slice, its recency unchanged. */
  get(owner: string): S | undefined {
    return this.slices.get(owner);
  }

  /** The owner's slice, marked the most recent. */
  use(owner: string, slice: S): void {
    if (this.last === owner) return;
    this.slices.delete(owner);
    this.slices.set(owner, slice);
    this.last = owner;
  }

  /** Makes `slice` the owner's as its most recent, evicting the least recent owner's (one no take fills) when full. */
  place(owner: string, slice: S): void {
    if (this.slices.size >= this.max) {
      for (const [oldest, evicted] of this.slices) {
        if (evicted.taking) continue;
        this.slices.delete(oldest);
        this.evicted(oldest, evicted);
        break;
      }
    }
    this.slices.set(owner, slice);
    this.last = owner;
  }

  /** Makes `slice` the owner's in the place its previous slice held. */
  replace(owner: string, slice: S): void {
    this.slices.set(owner, slice);
  }

  /** Forgets the owner's slice. */
  delete(owner: string): void {
    this.slices.delete(owner);
    if (this.last === owner) this.last = undefined;
  }

  /** Forgets every slice; answers them, least recent first. */
  clear(): Array<[string, S]> {
    const all = [...this.slices];
    this.slices.clear();
    this.last = undefined;
    return all;
  }

  /** Every slice. */
  values(): IterableIterator<S> {
    return this.slices.values();
  }

  /** Every owner and its slice, least recent first; an owner placed again while iterating comes again. */
  [Symbol.iterator](): IterableIterator<[string, S]> {
    return this.slices[Symbol.iterator]();
  }
}
